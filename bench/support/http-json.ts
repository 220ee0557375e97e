// JSON over loopback HTTP for the benches' setup checks and samples (what a side answers, whether it is ready).
// Measurements never go through here: they use the load generator (bench/support/load.ts).

/** A GET of `path`, its body parsed as JSON (a body that is no JSON throws), with its size in bytes. */
export async function getJson(port: number, path: string, timeoutMs = 10_000): Promise<{ status: number; body: any; bytes: number }> {
  const response = await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(timeoutMs) });
  const text = await response.text();
  return { status: response.status, body: JSON.parse(text), bytes: Buffer.byteLength(text) };
}
