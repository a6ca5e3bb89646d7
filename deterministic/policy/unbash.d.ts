// unbash declares its types only through package.json "exports", which the project's `node10`
// module resolution ignores; this points the bare specifier at the same declaration file.
declare module 'unbash' {
  export * from 'unbash/dist/parser';
}
