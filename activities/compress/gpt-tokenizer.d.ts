// gpt-tokenizer publishes its encodings as package "exports" subpaths, which the repo's
// `moduleResolution: node10` cannot see; these ambient modules point the types at the
// files that exist on disk. At run time Node (require) and Vite (import) use the exports map.
declare module 'gpt-tokenizer/encoding/cl100k_base' {
  export * from 'gpt-tokenizer/cjs/encoding/cl100k_base';
}
declare module 'gpt-tokenizer/encoding/o200k_base' {
  export * from 'gpt-tokenizer/cjs/encoding/o200k_base';
}
