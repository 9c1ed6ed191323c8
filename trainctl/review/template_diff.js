#!/usr/bin/env node
// Compare CloudFormation templates with the CDK's own diff engine, @aws-cdk/cloudformation-diff (pinned in
// package.json): the same engine `cdk diff` uses, which knows which property changes replace a resource.
// Input on stdin: {"<stack>": {"old": <template or null>, "new": <template or null>}, ...}
// Output on stdout: {"<stack>": {"resources": [{id, type, impact, properties: {name: impact}, other: [..],
//                                               changes: [{path, old, new, replaces}]}],
//                                "permissionsBroadened": bool, "securityGroupChanges": bool,
//                                "iamStatements": [[...], ...], "managedPolicies": [[...], ...],
//                                "securityGroupRules": [[...], ...],
//                                "names": {"old": {<logical ID>: [<type>, <name>]}, "new": {...}}}, ...}
// The three tables are the engine's own summaries (the ones `cdk diff` prints): a header row, then one row per
// statement, attachment or rule, its first cell "+" (added) or "-" (removed).
// `changes`: each changed value down to the nested property that changed (`LustreConfiguration.DeploymentType`),
// old and new, and whether changing it replaces the resource ("yes", "maybe", "no"). The engine judges only
// top-level properties; a nested one's `causesReplacement` comes from the same service spec database the engine
// reads (@aws-cdk/aws-service-spec, the CloudFormation resource schemas and documentation), and a nested change that
// replaces makes the resource's impact WILL_REPLACE (MAY_REPLACE for "maybe") where the engine said WILL_UPDATE.
// `names`: each resource's explicit name that must be unique in the account, before and after (nameProperties).
// A resource that imports a replaced resource's export in a property that cannot change in place is replaced too
// (replaceImporters): its `changes` name the import.
"use strict";
const { fullDiff } = require("@aws-cdk/cloudformation-diff");
const { loadAwsServiceSpecSync } = require("@aws-cdk/aws-service-spec");

let database;
function spec() {
  database = database || loadAwsServiceSpecSync();
  return database;
}

const REPLACES = { WILL_REPLACE: "yes", MAY_REPLACE: "maybe" };

function isPlainObject(value) {
  return value !== null && typeof value === "object" && !Array.isArray(value) &&
    !Object.keys(value).some((k) => k === "Ref" || k.startsWith("Fn::"));
}

function same(a, b) {
  return JSON.stringify(a) === JSON.stringify(b);
}

// The changed values under one property, down to the nested properties its type definition names.
function changesOf(path, oldValue, newValue, propertySpec, replaces, out) {
  const ref = propertySpec && propertySpec.type && propertySpec.type.type === "ref" && propertySpec.type.reference.$ref;
  const definition = ref ? spec().get("typeDefinition", ref) : undefined;
  if (definition && isPlainObject(oldValue || {}) && isPlainObject(newValue || {})) {
    const keys = new Set([...Object.keys(oldValue || {}), ...Object.keys(newValue || {})]);
    for (const key of [...keys].sort()) {
      const before = (oldValue || {})[key], after = (newValue || {})[key];
      if (same(before, after)) continue;
      const nested = (definition.properties || {})[key];
      changesOf(`${path}.${key}`, before, after, nested, (nested && nested.causesReplacement) || "no", out);
    }
    return;
  }
  out.push({ path, old: oldValue === undefined ? null : oldValue, new: newValue === undefined ? null : newValue,
             replaces });
}

function resourceChanges(change, type) {
  const out = [];
  const model = type ? spec().lookup("resource", "cloudFormationType", "equals", type)[0] : undefined;
  for (const [name, update] of Object.entries(change.propertyUpdates)) {
    const impact = update.changeImpact || "WILL_UPDATE";
    changesOf(name, update.oldValue, update.newValue, model && model.properties[name], REPLACES[impact] || "no", out);
  }
  return out;
}

// The properties that give a resource of `type` a name unique in its account and region (its physical ID, or part
// of its ARN), by the service spec: a property ending in "Name" that replaces the resource when it changes and is
// its primary identifier, in its ARN template or named after the type (StateMachineName); or a nested "...Name" in
// its ARN template (Budget.BudgetName). An inline policy's PolicyName, a resolver rule group's Name are not.
const namePaths = new Map();
function nameProperties(type) {
  if (namePaths.has(type)) return namePaths.get(type);
  const model = spec().lookup("resource", "cloudFormationType", "equals", type)[0];
  const out = [];
  if (model) {
    const last = type.split("::").pop(), arn = model.arnTemplate || "", ids = model.primaryIdentifier || [];
    const inArn = (p) => arn.includes("${" + p + "}") || arn.includes("${" + p + "WithPath}");
    for (const [p, property] of Object.entries(model.properties)) {
      if (/Name$/.test(p) && property.causesReplacement === "yes" && (inArn(p) || (ids.length === 1 && ids[0] === p) ||
          p === last + "Name" || (p === "Name" && inArn(last + "Name")))) out.push([p]);
      const ref = property.type && property.type.type === "ref" && property.type.reference.$ref;
      const definition = ref ? spec().get("typeDefinition", ref) : undefined;
      for (const q of Object.keys((definition && definition.properties) || {})) {
        if (/Name$/.test(q) && inArn(q)) out.push([p, q]);
      }
    }
  }
  namePaths.set(type, out);
  return out;
}

// Logical ID -> [type, the literal name a template gives the resource] (none where the name is generated or a token).
function namesOf(template) {
  const out = {};
  for (const [id, resource] of Object.entries((template && template.Resources) || {})) {
    for (const path of nameProperties(resource.Type)) {
      const value = path.reduce((v, key) => (v && typeof v === "object" ? v[key] : undefined), resource.Properties);
      if (typeof value === "string" && value) out[id] = [resource.Type, value];
    }
  }
  return out;
}

function describe(diff) {
  const resources = [];
  diff.resources.forEachDifference((id, change) => {
    const type = change.newResourceType || change.oldResourceType;
    const properties = {};
    for (const [name, update] of Object.entries(change.propertyUpdates)) {
      properties[name] = update.changeImpact || "WILL_UPDATE";
    }
    const changes = change.oldValue && change.newValue ? resourceChanges(change, type) : [];
    let impact = change.changeImpact;
    // The engine rates a property change of a type the spec does not know (a Custom:: resource) NO_CHANGE;
    // CloudFormation sends the resource an Update all the same.
    if (impact === "NO_CHANGE" && Object.keys(change.propertyUpdates).length) impact = "WILL_UPDATE";
    if (impact === "WILL_UPDATE" && changes.some((c) => c.replaces === "yes")) impact = "WILL_REPLACE";
    else if (impact === "WILL_UPDATE" && changes.some((c) => c.replaces === "maybe")) impact = "MAY_REPLACE";
    resources.push({ id, type, impact, properties, other: Object.keys(change.otherChanges), changes });
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

const REPLACING = ["WILL_REPLACE", "MAY_REPLACE"];

// The logical IDs a value reads (Ref, Fn::GetAtt), and the exports it imports (Fn::ImportValue of a literal name).
function reads(value, refs, imports) {
  if (Array.isArray(value)) value.forEach((v) => reads(v, refs, imports));
  else if (value && typeof value === "object") {
    for (const [key, inner] of Object.entries(value)) {
      if (key === "Ref" && typeof inner === "string") refs.add(inner);
      else if (key === "Fn::GetAtt" && Array.isArray(inner)) refs.add(String(inner[0]));
      else if (key === "Fn::ImportValue" && typeof inner === "string") imports.add(inner);
      else reads(inner, refs, imports);
    }
  }
}

// A replaced resource gets a new ID, so an export of it changes at deploy though its text does not, and a resource of
// another stack that imports it in a property that cannot change in place is replaced too (a file system in a new
// subnet). The engine sees neither: it compares each template's text. `out`: "<env>/<stack>" -> describe(), amended.
function replaceImporters(pairs, out) {
  const changed = {};  // env -> export name -> "<stack> replaces <id>"
  for (const [key, pair] of Object.entries(pairs)) {
    const [env, stack] = key.split("/");
    const replaced = new Set(out[key].resources.filter((r) => REPLACING.includes(r.impact)).map((r) => r.id));
    for (const output of Object.values((pair.new && pair.new.Outputs) || {})) {
      const name = output.Export && output.Export.Name, refs = new Set();
      reads(output.Value, refs, new Set());
      const hit = [...refs].find((id) => replaced.has(id));
      if (typeof name === "string" && hit) (changed[env] = changed[env] || {})[name] = `${stack} replaces ${hit}`;
    }
  }
  for (const [key, pair] of Object.entries(pairs)) {
    const exports = changed[key.split("/")[0]] || {};
    for (const [id, resource] of Object.entries((pair.old && pair.new && pair.new.Resources) || {})) {
      if (!(pair.old.Resources || {})[id]) continue;
      const model = spec().lookup("resource", "cloudFormationType", "equals", resource.Type)[0];
      const causes = [];
      for (const [property, value] of Object.entries(resource.Properties || {})) {
        const imports = new Set();
        reads(value, new Set(), imports);
        const replaces = (model && model.properties[property] && model.properties[property].causesReplacement) || "no";
        for (const name of [...imports].filter((n) => exports[n] && replaces !== "no")) {
          causes.push({ path: property, old: { "Fn::ImportValue": name }, new: `a new value (${exports[name]})`,
                        replaces });
        }
      }
      if (!causes.length) continue;
      let entry = out[key].resources.find((r) => r.id === id);
      if (!entry) {
        entry = { id, type: resource.Type, impact: "WILL_UPDATE", properties: {}, other: [], changes: [] };
        out[key].resources.push(entry);
      }
      entry.changes.push(...causes);
      const worst = causes.some((c) => c.replaces === "yes") ? "WILL_REPLACE" : "MAY_REPLACE";
      if (!REPLACING.includes(entry.impact) || worst === "WILL_REPLACE") entry.impact = worst;
    }
  }
}

let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => { input += chunk; });
process.stdin.on("end", () => {
  const pairs = JSON.parse(input);
  const out = {};
  for (const [stack, pair] of Object.entries(pairs)) {
    out[stack] = { ...describe(fullDiff(pair.old || {}, pair.new || {})),
                   names: { old: namesOf(pair.old), new: namesOf(pair.new) } };
  }
  replaceImporters(pairs, out);
  process.stdout.write(JSON.stringify(out));
});
