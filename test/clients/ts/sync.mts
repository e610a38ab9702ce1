// An integrator's first sync, written against the TypeScript types that
// openapi-typescript generates from the served OpenAPI document (the test
// writes schema.d.ts beside this file) and the openapi-fetch client. It
// exits non-zero, naming the step, when the API does not behave as the
// document says.
import createClient from "openapi-fetch";
import type { paths } from "./schema.js";

declare const process: { env: Record<string, string | undefined>; exit(code: number): never };

const base = process.env.PRAXIS_URL ?? "";
const customer = Number(process.env.CUSTOMER_ID);

function fail(step: string, detail: unknown): never {
  console.error(`sync: ${step}: ${JSON.stringify(detail)}`);
  process.exit(1);
}

const anon = createClient<paths>({ baseUrl: base });
// 1. A token, client_secret_basic.
const basic = btoa(`${process.env.CLIENT_ID}:${process.env.CLIENT_SECRET}`);
const tok = await anon.POST("/api/oauth/v2/token", {
  headers: { Authorization: `Basic ${basic}`, "Content-Type": "application/x-www-form-urlencoded" },
  body: { grant_type: "client_credentials" },
  bodySerializer: (b) => new URLSearchParams(b as Record<string, string>),
});
if (!tok.data) fail("token", tok.error);
const api = createClient<paths>({ baseUrl: base, headers: { Authorization: `Bearer ${tok.data.access_token}` } });

// 2. The practice's patients, paged to the end.
let patients = 0;
let cursor: string | undefined;
for (;;) {
  const page = await api.GET("/api/oauth/v2/resource/customers", { params: { query: { limit: 1, cursor } } });
  if (!page.data) fail("list customers", page.error);
  patients += page.data.data.length;
  cursor = page.data.next_cursor;
  if (!page.data.has_more) break;
}
if (patients === 0) fail("list customers", "no patient");

// 2b. A patient found by what an integrator types (folded: ueberr finds
// Überreiter), in an order, counted; and matched by what a lab knows.
const made = await api.POST("/api/oauth/v2/resource/customers", { body: { first_name: "Karl", last_name: "Überreiter", birth_date: "1944-04-04" } });
if (!made.data) fail("create a patient", made.error);
const found = await api.GET("/api/oauth/v2/resource/customers", { params: { query: { q: "ueberr karl", sort: "-last_name,first_name", total: true } } });
if (!found.data || found.data.total !== 1 || found.data.data.length !== 1 || found.data.data[0].id !== made.data.id) fail("search", found.data ?? found.error);
const matched = await api.POST("/api/oauth/v2/resource/customers/match", { body: { customer: { first_name: "Karl", last_name: "Ueberreiter", birth_date: "1944-04-04" } } });
if (!matched.data || matched.data.data[0]?.customer.id !== made.data.id || matched.data.data[0].grade !== "probable") fail("match", matched.data ?? matched.error);

// 3. A note, created twice with one Idempotency-Key: once.
const note = { customer_id: customer, text: "Befund besprochen" };
const key = { "Idempotency-Key": "first-sync-note-ts" };
const first = await api.POST("/api/oauth/v2/resource/notes", { params: { header: key }, body: note });
if (!first.data) fail("create note", first.error);
const again = await api.POST("/api/oauth/v2/resource/notes", { params: { header: key }, body: note });
if (!again.data || again.data.id !== first.data.id || again.response.headers.get("Idempotent-Replayed") !== "true") fail("replayed create", again.error);

// 4. Notes paged to the end; the last cursor is kept.
async function pageNotes(after?: string): Promise<[string[], string]> {
  const ids: string[] = [];
  for (;;) {
    const page = await api.GET("/api/oauth/v2/resource/notes", { params: { query: { cursor: after } } });
    if (!page.data) fail("list notes", page.error);
    for (const item of page.data.data) ids.push(String(item.id));
    after = page.data.next_cursor;
    if (!page.data.has_more) return [ids, after];
  }
}
const [notes, kept] = await pageNotes();
if (notes.length !== 1) fail("notes", notes);

// 5. A later write; the kept cursor answers exactly it.
const later = await api.POST("/api/oauth/v2/resource/notes", { body: { customer_id: customer, text: "Kontrolle in 3 Monaten" } });
if (!later.data) fail("create a later note", later.error);
const [resumed] = await pageNotes(kept);
if (resumed.length !== 1 || resumed[0] !== later.data.id) fail("resume", resumed);

// 6. A patient changed with the version read (If-Match), a stale version
// refused (412), a current copy not sent again (304), notes read by id.
const path = { id: String(customer) };
const read = await api.GET("/api/oauth/v2/resource/customers/{id}", { params: { path } });
const etag = read.response.headers.get("ETag");
if (!read.data || etag !== `"${read.data.version}"`) fail("read a patient with its version", read.error);
const patched = await api.PATCH("/api/oauth/v2/resource/customers/{id}", {
  params: { path, header: { "If-Match": etag, "Idempotency-Key": "first-sync-patch-ts" } },
  body: { phone: "+4315551234" } as never, // a merge patch: any of the patient's fields
});
if (!patched.data || patched.data.version !== read.data.version + 1) fail("conditional patch", patched.error);
const stale = await api.PATCH("/api/oauth/v2/resource/customers/{id}", {
  params: { path, header: { "If-Match": etag } },
  body: { phone: "+4315559999" } as never,
});
const problem = stale.error as { type?: string; current_version?: number } | undefined;
if (stale.response.status !== 412 || problem?.type !== "version-mismatch" || problem.current_version !== patched.data.version) fail("stale patch", stale.error);
const same = await api.GET("/api/oauth/v2/resource/customers/{id}", {
  params: { path, header: { "If-None-Match": patched.response.headers.get("ETag") ?? "" } },
});
if (same.response.status !== 304) fail("conditional read", same.response.status);
const byID = await api.GET("/api/oauth/v2/resource/notes", { params: { query: { ids: `${first.data.id},${later.data.id}` } } });
if (!byID.data || byID.data.data.length !== 2 || byID.data.not_found?.length !== 0) fail("notes by id", byID.error);

// 7. A file up and down again.
const pdf = "%PDF-1.4\n% first sync\n" + "x".repeat(4000);
const form = new FormData();
form.append("customer_id", String(customer));
form.append("file", new Blob([pdf], { type: "application/pdf" }), "befund.pdf");
const up = await api.POST("/api/oauth/v2/resource/files", { body: form as never, bodySerializer: (b) => b as unknown as FormData });
if (!up.data || up.data.data.length !== 1) fail("upload", up.error);
const down = await api.GET("/api/oauth/v2/resource/files/{id}/download", {
  params: { path: { id: up.data.data[0].id } },
  parseAs: "text",
});
if (down.data !== pdf) fail("download", down.response.status);
console.log("first sync done");
