#!/usr/bin/env node
// Compare CloudFormation templates with the CDK's own diff engine, @aws-cdk/cloudformation-diff (pinned in
// package.json): the same engine `cdk diff` uses, which knows which property changes replace a resource.
// Input on stdin: {"<stack>": {"old": <template or null>, "new": <template or null>}, ...}
// Output on stdout: {"<stack>": {"resources": [{id, type, impact, properties: {name: impact}, other: [..]}],
//                                "permissionsBroadened": bool, "securityGroupChanges": bool,
//                                "iamStatements": [[...], ...], "managedPolicies": [[...], ...],
//                                "securityGroupRules": [[...], ...]}, ...}
// The three tables are the engine's own summaries (the ones `cdk diff` prints): a header row, then one row per
// statement, attachment or rule, its first cell "+" (added) or "-" (removed).
"use strict";
const { fullDiff } = require("@aws-cdk/cloudformation-diff");

function describe(diff) {
  const resources = [];
  diff.resources.forEachDifference((id, change) => {
    const properties = {};
    for (const [name, update] of Object.entries(change.propertyUpdates)) {
      properties[name] = update.changeImpact || "WILL_UPDATE";
    }
    resources.push({
      id,
      type: change.newResourceType || change.oldResourceType,
      impact: change.changeImpact,
      properties,
      other: Object.keys(change.otherChanges),
    });
  });
  return {
    resources,
    permissionsBroadened: diff.permissionsBroadened,
    securityGroupChanges: diff.securityGroupChanges.hasChanges,
    iamStatements: diff.iamChanges.hasChanges ? diff.iamChanges.summarizeStatements() : [],
    managedPolicies: diff.iamChanges.hasChanges ? diff.iamChanges.summarizeManagedPolicies() : [],
    securityGroupRules: diff.securityGroupChanges.hasChanges ? diff.securityGroupChanges.summarize() : [],
  };
}

let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => { input += chunk; });
process.stdin.on("end", () => {
  const pairs = JSON.parse(input);
  const out = {};
  for (const [stack, pair] of Object.entries(pairs)) {
    out[stack] = describe(fullDiff(pair.old || {}, pair.new || {}));
  }
  process.stdout.write(JSON.stringify(out));
});
