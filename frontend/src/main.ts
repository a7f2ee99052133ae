// headwater's web UI: routes every page URL to its view.
import "./style.css";

import { datasetView } from "./views/dataset";
import { driftView } from "./views/drift";
import { homeView, searchView } from "./views/browse";
import { jobView } from "./views/job";
import { lineageView } from "./views/lineage";
import { producersView } from "./views/producers";
import { runView } from "./views/run";
import { onViewStart, route, startRouter } from "./router";
import { newView } from "./api";
import { searchBox } from "./search-box";
import { showSignedIn } from "./auth";
import { watchRunIds } from "./run-ids";

// Cytoscape.js adds a <style> element for its container unless an element with this id
// exists; the page's content security policy refuses inline styles, so the rule it would
// add is in style.css and this marker stands in for the element.
const cytoscapeStyleMarker = document.createElement("meta");
cytoscapeStyleMarker.id = "__________cytoscape_stylesheet";
document.head.prepend(cytoscapeStyleMarker);

onViewStart(newView);
route(/^\/$/, () => (root) => homeView(root));
route(/^\/search$/, () => (root, url) => searchView(root, url));
route(/^\/lineage$/, () => (root, url) => lineageView(root, url));
route(/^\/datasets\/([^/]+)\/([^/]+)$/, ([ns, name]) => (root, url) => datasetView(root, url, ns, name));
route(/^\/jobs\/([^/]+)\/([^/]+)$/, ([ns, name]) => (root) => jobView(root, ns, name));
route(/^\/runs\/([^/]+)$/, ([id]) => (root, url) => runView(root, url, id));
route(/^\/producers$/, () => (root) => producersView(root));
route(/^\/drift$/, () => (root, url) => driftView(root, url));

document.getElementById("search-slot")!.append(searchBox());
showSignedIn();
watchRunIds(document.getElementById("app")!);
startRouter();
