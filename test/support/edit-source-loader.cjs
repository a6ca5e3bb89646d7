/**
 * A webpack loader for tests that bundle a deliberately changed copy of the workflow code:
 * replaces `from` with `to` in the module it is applied to, and fails the bundle when `from` is
 * not there (the edit must not silently stop applying when the real code changes).
 */
module.exports = function editSource(source) {
  const { from, to } = this.getOptions();
  if (!source.includes(from)) throw new Error(`edit-source-loader: "${from}" not found in ${this.resourcePath}`);
  return source.replace(from, to);
};
