// Keeps the builder's cache (.cache/, see docs/cli.md "Build cache") in Netlify's build cache
// between deploys, so a deploy renders and indexes only what changed since the last one
// instead of the whole site: a fresh clone has no .cache/. Every entry is keyed by everything
// it was made from (code, templates, settings, inputs) and checked against its sha256 when
// read, so a restored entry is either exactly right or made again. Nothing is saved from a
// failed build (Netlify runs onPostBuild only after the build command succeeds).
const fs = require("node:fs");
const path = require("node:path");

const CACHE = ".cache";
// The site the last local build replaced, which the next one stages into (docs/cli.md): it
// belongs to this checkout's _site/, and would only make the saved cache a site larger.
const SPARE = "spare-site";

// On Netlify it is moved, not copied, both ways: a rename is instant, a copy of a 1,000-guide
// site's cache (about 5,000 files, 200 MB) takes seconds. Moving it out after the build is
// safe: the pages of _site/ are hard links to its entries, and stay. A local `netlify build`
// copies, so the checkout keeps its own .cache/.
const how = (constants) => ({ move: !constants.IS_LOCAL });

module.exports = {
  async onPreBuild({ utils, constants }) {
    const restored = await utils.cache.restore(CACHE, how(constants));
    console.log(restored ? `Restored ${CACHE}/ from Netlify's build cache` : `No ${CACHE}/ saved yet`);
  },
  async onPostBuild({ utils, constants }) {
    for (const version of fs.existsSync(CACHE) ? fs.readdirSync(CACHE) : []) {
      fs.rmSync(path.join(CACHE, version, SPARE), { recursive: true, force: true });
    }
    if (await utils.cache.save(CACHE, how(constants))) {
      console.log(`Saved ${CACHE}/ to Netlify's build cache`);
    }
  },
};
