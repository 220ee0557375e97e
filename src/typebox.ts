// TypeBox, as this project uses it, through one module. `typebox/compile` alone is 681 ES modules: loading them cost
// ~0.8 s of CPU on every process start here (node -e "await import('typebox/compile')": 0.85–0.95 s of user+system
// against 0.1 s for an empty script, mostly the module loader resolving, opening and compiling each file), before a
// service reads its config or `adm` runs a command. The build bundles this file's output with esbuild into a single
// module (package.json `build`), so every caller gets TypeBox in one file; unbundled (a plain `tsc`) it works the same,
// only slower to load. Everything imports TypeBox from here, so there is one copy of its state (`Settings`).
export { default as Type } from 'typebox';
export type { Static, TSchema } from 'typebox';
export { Compile } from 'typebox/compile';
export { Settings } from 'typebox/system';
