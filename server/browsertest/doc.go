// Package browsertest checks graphctl serve against a real browser page built
// as LangGraph users build theirs: the official SDK's React useStream (in
// page.jsx, bundled with esbuild), served on another origin and driven by
// Playwright (playwright-core) in Debian's chromium. The page sends a
// message, answers an interrupt, regenerates the last answer from its
// parent checkpoint and reads the thread list.
//
// `npm ci` in this directory installs what the page and the driver need
// (.ci/run does). Outside CI the test skips when node, the npm packages or
// chromium are missing, saying so; with GRAPHCTL_REQUIRE_BROWSER=1 (set by
// .ci/run) it fails instead.
package browsertest
