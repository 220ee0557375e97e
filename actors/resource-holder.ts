// The one resource an actor opens (files: the helia node; transfers: the database) and the actors after it in the
// tree use: the owner sets it when it is open and clears it when it closes; the users `get()` it at each use, so a
// restarted owner's new resource is what they reach, and a missing one is an error they map (503 at the edge).

export class ResourceHolder<T> {
  #value: T | undefined;
  #unavailable: Error | undefined;

  /** `notReady` makes the error get() throws while nothing is set. */
  constructor(private readonly notReady: () => Error) {}

  set(value: T | undefined): void {
    this.#value = value;
    this.#unavailable = undefined;
  }

  /** Open, but not to be used yet: get() throws `reason` until the next set(). */
  unavailable(reason: Error): void {
    this.#value = undefined;
    this.#unavailable = reason;
  }

  get(): T {
    if (this.#value === undefined) throw this.#unavailable ?? this.notReady();
    return this.#value;
  }
}
