// Start Pagefind's search UI on /search/ and run the query the header form sent (?q=).
// A big site's index comes in shards: /pagefind/shards.json lists the bundles to merge.
// They are merged all at once, not one after the other as the UI's own `mergeIndex` option
// merges them: at ten shards that took the first result from 0.94 s to 1.7 s.
// The script declares no constants: the preview runs it again in the same document.
var EXCERPT_WORDS = 12; // the UI's own with sub-results, now for every shard alike
var mergedShards = window.mergedShards ?? new Set(); // a global: each bundle merged once

async function shardBundles() {
  try {
    const response = await fetch("/pagefind/shards.json");
    return response.ok ? await response.json() : [];
  } catch {
    return []; // no list (the preview before its first index): the first shard alone
  }
}

// Pagefind's module stays loaded when the preview swaps in a new page and runs this again.
async function mergeShards() {
  const bundles = (await shardBundles()).filter((bundle) => !mergedShards.has(bundle));
  if (!bundles.length) {
    return;
  }
  const pagefind = await import("/pagefind/pagefind.js");
  for (const bundle of bundles) {
    mergedShards.add(bundle);
    pagefind.mergeIndex(bundle, { excerptLength: EXCERPT_WORDS }).catch((error) => {
      console.error(`Pagefind could not load ${bundle}:`, error);
    });
  }
}

async function startSearch() {
  await mergeShards(); // started, not waited for: a search waits for every merged shard
  const ui = new PagefindUI({
    element: "#search",
    showSubResults: true,
    excerptLength: EXCERPT_WORDS,
    showImages: false,
    resetStyles: false,
    autofocus: true,
  });
  // Pagefind's input is labelled only by a title; name it by the page heading instead.
  const input = document.querySelector("#search input");
  if (input) {
    input.setAttribute("aria-labelledby", "search-title");
    input.setAttribute("name", "q");
  }
  const query = new URLSearchParams(window.location.search).get("q");
  if (query) {
    ui.triggerSearch(query);
  }
}

// Deferred, the script runs before DOMContentLoaded; the preview runs it again after
// swapping in a new page, when the document is long loaded.
if (document.readyState === "loading") {
  window.addEventListener("DOMContentLoaded", startSearch);
} else {
  startSearch();
}
