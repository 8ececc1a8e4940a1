// The Kubernetes documents under examples/, checked as a cluster would read
// them: every document's apiVersion and kind must have a schema here, and
// the document must pass it (the JSON schemas that ship with the npm
// packages kubernetes-models, @kubernetes-models/istio and
// @kubernetes-models/gateway-api, which are generated from the projects'
// CRDs and OpenAPI). Needs Node 22 (the packages' engines).
//
//   node tests/release/examples.mjs examples/*/*.yaml
//
// Ends with `N passed, N failed`; exits non-zero when a document fails or
// has no schema. The kinds without a published schema (Envoy Gateway's)
// are listed in UNCHECKED, and said so in the output, never passed.
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';

import { parseAllDocuments } from 'yaml';

// apiVersion group -> the npm package whose models hold its schemas.
const PACKAGES = {
  '': 'kubernetes-models',
  apps: 'kubernetes-models/apps',
  'networking.istio.io': '@kubernetes-models/istio/networking.istio.io',
  'security.istio.io': '@kubernetes-models/istio/security.istio.io',
  'extensions.istio.io': '@kubernetes-models/istio/extensions.istio.io',
  'telemetry.istio.io': '@kubernetes-models/istio/telemetry.istio.io',
  'install.istio.io': '@kubernetes-models/istio/install.istio.io',
  'gateway.networking.k8s.io': '@kubernetes-models/gateway-api/gateway.networking.k8s.io',
};
// Envoy Gateway publishes its CRDs only in its Helm chart, which no registry
// here serves; these documents are written from its documentation.
const UNCHECKED = new Set(['gateway.envoyproxy.io']);
// Documents that are not cluster resources: `istioctl install -f` and the
// istiod Helm values read them. Anywhere else, `kubectl apply` would fail.
const NOT_CLUSTER = new Map([['install.istio.io/v1alpha1/IstioOperator', /mesh-config\.yaml$/]]);

let passed = 0;
let failed = 0;
const unchecked = [];

function fail(where, message) {
  failed++;
  console.log(`${where}: ${message}`);
}

for (const file of process.argv.slice(2)) {
  const shown = relative(process.cwd(), file);
  const documents = parseAllDocuments(readFileSync(file, 'utf8'));
  for (const [n, doc] of documents.entries()) {
    const where = `${shown} #${n + 1}`;
    if (doc.errors.length > 0) {
      fail(where, `not YAML: ${doc.errors[0].message}`);
      continue;
    }
    const value = doc.toJS();
    if (value === null) continue; // a file that is only comments (agentgateway's has none)
    const { apiVersion, kind } = value;
    if (typeof apiVersion !== 'string' || typeof kind !== 'string') {
      fail(where, 'no apiVersion and kind: not a Kubernetes document');
      continue;
    }
    const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
    const id = `${apiVersion}/${kind}`;
    const allowedIn = NOT_CLUSTER.get(id);
    if (allowedIn && !allowedIn.test(file)) {
      fail(where, `${kind} is not a cluster resource (kubectl apply refuses it); give it in a file for istioctl or Helm`);
      continue;
    }
    if (UNCHECKED.has(group)) {
      unchecked.push(`${where} ${id}`);
      continue;
    }
    const pkg = PACKAGES[group];
    if (!pkg) {
      fail(where, `no schema for ${id} here: add its models package`);
      continue;
    }
    let Model;
    try {
      Model = (await import(`${pkg}/${version}/${kind}`))[kind];
    } catch {
      fail(where, `no schema for ${id} in ${pkg}`);
      continue;
    }
    try {
      new Model(value).validate();
      passed++;
    } catch (e) {
      fail(where, `${id} ${value.metadata?.name ?? ''}: ${e.message}`);
    }
  }
}
for (const u of unchecked) console.log(`no published schema, not checked: ${u}`);
console.log(`${passed} passed, ${failed} failed`);
process.exitCode = failed > 0 ? 1 : 0;
