// Start Pagefind's search UI on /search/ and run the query the header form sent (?q=).
// A big site's index comes in shards: /pagefind/shards.json lists the bundles to merge.
async function mergedShards() {
  try {
    const response = await fetch("/pagefind/shards.json");
    return response.ok ? (await response.json()).map((bundlePath) => ({ bundlePath })) : [];
  } catch {
    return [];  // no list (the preview before its first index): the first shard alone
  }
}

async function startSearch() {
  const ui = new PagefindUI({
    element: "#search",
    showSubResults: true,
    showImages: false,
    resetStyles: false,
    autofocus: true,
    mergeIndex: await mergedShards(),
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
