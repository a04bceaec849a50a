// Merged into @jupyter/builder's config (package.json's
// jupyterlab.webpackConfig). Module ids in the order modules are built,
// not hashed from their identifiers: the module federation container's
// identifier holds the absolute paths of what it exposes, so a hashed id
// made the build depend on where the checkout is, and the build kept in
// labextension/prebuilt could not be checked against a fresh one.
module.exports = {
  optimization: { moduleIds: 'natural' }
};
