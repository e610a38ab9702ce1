package web

import (
	"fmt"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// The site speaks German and English: the browser's language first, the
// language cookie once the person chose.
var messages = map[string]map[string]string{
	"de": { //nolint:gosec // G101: texts that name secrets are not secrets
		"title.signin": "Anmelden", "title.join": "Willkommen", "title.verify": "Bestätigen", "title.error": "Fehler",
		"title.overview": "Übersicht", "title.integrations": "Integrationen", "title.devices": "Geräte",
		"title.audit": "Protokoll", "title.staff": "Team",
		"nav.label": "Einstellungen", "nav.signout": "Abmelden", "nav.skip": "Zum Inhalt springen",
		"role.admin": "Administration", "role.viewer": "Nur lesen", "actions": "Aktionen",
		"signin.intro":  "Melden Sie sich mit dem Passkey an, den Sie bei Ihrer Einladung angelegt haben.",
		"signin.button": "Mit Passkey anmelden",
		"signin.lost":   "Passkey verloren? Bitten Sie eine Administratorin oder Ihren Betreiber um eine neue Einladung.",
		"join.intro":    "Legen Sie einen Passkey an: Damit melden Sie sich künftig an, ohne Passwort. Der Einladungslink gilt nur einmal.",
		"join.button":   "Passkey anlegen",
		"passkey.name":  "Name des Passkeys (z. B. „Laptop Empfang“)",
		"verify.intro":  "Bevor ein Geheimnis angezeigt oder ersetzt wird, bestätigen Sie bitte mit Ihrem Passkey.",
		"verify.button": "Mit Passkey bestätigen",
		"error.back":    "Zurück zur Übersicht",
		"error.400":     "Die Anfrage ist fehlerhaft", "error.401": "Bitte melden Sie sich an",
		"error.403": "Das dürfen Sie nicht (Rolle oder abgelaufenes Formular)", "error.404": "Nicht gefunden oder nicht mehr gültig",
		"error.409": "Das geht nicht: Es muss eine Administration bleiben, bzw. der Zustand hat sich geändert",
		"error.413": "Die Anfrage ist zu groß", "error.422": "Bitte prüfen Sie die Eingabe",
		"error.429": "Zu viele fehlgeschlagene Anmeldungen. Bitte warten Sie kurz.",
		"error.500": "Ein interner Fehler ist aufgetreten", "error.503": "Der Dienst ist vorübergehend nicht erreichbar",
		"overview.practice": "Praxis", "overview.company_id": "Company-ID", "overview.plan": "Tarif",
		"overview.storage": "Speicher", "overview.storage_of": "%s von %s belegt", "overview.release": "API-Release",
		"overview.staff":             "Teammitglieder",
		"integrations.intro":         "OAuth-Clients Ihrer Integratoren (Abrechnung, Labor, Terminbuchung). Vergeben Sie nur die Bereiche, die ein Integrator braucht.",
		"integrations.list":          "Clients",
		"integrations.name":          "Name",
		"integrations.client_id":     "Client-ID",
		"integrations.secret":        "Client-Secret",
		"integrations.scopes":        "Bereiche",
		"integrations.all_scopes":    "alle",
		"integrations.created":       "Angelegt",
		"integrations.state":         "Status",
		"integrations.active":        "aktiv",
		"integrations.revoked":       "widerrufen",
		"integrations.none":          "Noch keine Clients.",
		"integrations.rotate":        "Secret erneuern",
		"integrations.rotate_label":  "Secret von %s erneuern",
		"integrations.revoke":        "Widerrufen",
		"integrations.revoke_label":  "%s widerrufen",
		"integrations.create":        "Neuer Client",
		"integrations.create_button": "Client anlegen",
		"integrations.section":       "Bereich",
		"integrations.read":          "lesen",
		"integrations.write":         "schreiben",
		"integrations.overlap":       "Das alte Secret gilt noch bis",
		"secret.once":                "Nur jetzt sichtbar: Kopieren Sie das Geheimnis sofort. Es wird nicht erneut angezeigt.",
		"secret.copy":                "Kopieren",
		"devices.intro":              "Geräte und die GDT-Bridge laden Untersuchungsergebnisse mit dem Upload-Secret der Praxis hoch.",
		"devices.doors":              "Upload-Adressen",
		"devices.secret":             "Upload-Secret",
		"devices.config":             "Konfiguration für die GDT-Bridge",
		"devices.download":           "Konfiguration herunterladen",
		"devices.rotate":             "Upload-Secret erneuern",
		"devices.rotate_warning":     "Das bisherige Secret gilt danach sofort nicht mehr: Tragen Sie das neue in jedes Gerät und jede Bridge ein.",
		"devices.rotate_button":      "Neues Upload-Secret erzeugen",
		"audit.intro":                "Wer hat wann auf die Daten einer Patientin oder eines Patienten zugegriffen? Suchen Sie nach der Kunden-ID.",
		"audit.customer_id":          "Kunden-ID (leer: alle Ereignisse)",
		"audit.search":               "Suchen",
		"audit.agent_filter":         "Wer (Client-ID, oder gdt / sonogdt für Geräte; leer: alle)",
		"audit.export":               "Exportieren (JSON Lines)",
		"integrations.deprecated":    "Aufrufe veralteter Operationen",
		"integrations.operation":     "Operation",
		"integrations.day":           "Tag",
		"integrations.calls":         "Aufrufe",
		"devices.uploads":            "Letzte Uploads (im Protokoll)",
		"audit.events":               "Ereignisse",
		"audit.time":                 "Zeit (UTC)",
		"audit.agent":                "Wer",
		"audit.action":               "Aktion",
		"audit.section":              "Bereich",
		"audit.object":               "Objekt",
		"audit.outcome":              "Ergebnis",
		"audit.customers":            "Kunden",
		"audit.none":                 "Keine Ereignisse.",
		"audit.more":                 "Weitere Ereignisse",
		"staff.members":              "Teammitglieder",
		"staff.email":                "E-Mail",
		"staff.role":                 "Rolle",
		"staff.role_of":              "Rolle von %s",
		"staff.change_role":          "Rolle ändern",
		"staff.remove":               "Entfernen",
		"staff.remove_label":         "%s entfernen",
		"staff.invites":              "Offene Einladungen",
		"staff.until":                "gültig bis",
		"staff.invite":               "Jemanden einladen",
		"staff.invite_button":        "Einladungslink erzeugen",
		"staff.link_once":            "Einladungslink (nur jetzt sichtbar, 72 Stunden gültig, einmal verwendbar)",
		"staff.passkeys":             "Ihre Passkeys",
		"staff.added":                "angelegt",
		"staff.last_used":            "zuletzt benutzt",
		"staff.add_passkey":          "Weiteren Passkey anlegen",
	},
	"en": { //nolint:gosec // G101: texts that name secrets are not secrets
		"title.signin": "Sign in", "title.join": "Welcome", "title.verify": "Confirm", "title.error": "Error",
		"title.overview": "Overview", "title.integrations": "Integrations", "title.devices": "Devices",
		"title.audit": "Audit trail", "title.staff": "Staff",
		"nav.label": "Settings", "nav.signout": "Sign out", "nav.skip": "Skip to content",
		"role.admin": "Admin", "role.viewer": "Viewer", "actions": "Actions",
		"signin.intro":  "Sign in with the passkey you created when you were invited.",
		"signin.button": "Sign in with a passkey",
		"signin.lost":   "Lost your passkey? Ask an admin of your practice or your operator for a new invitation.",
		"join.intro":    "Create a passkey: you will sign in with it from now on, without a password. The invitation link works once.",
		"join.button":   "Create a passkey",
		"passkey.name":  "Name of the passkey (e.g. \"Front desk laptop\")",
		"verify.intro":  "Before a secret is shown or replaced, please confirm with your passkey.",
		"verify.button": "Confirm with a passkey",
		"error.back":    "Back to the overview",
		"error.400":     "The request is malformed", "error.401": "Please sign in",
		"error.403": "You may not do this (your role, or the form is stale)", "error.404": "Not found, or no longer valid",
		"error.409": "Not possible: the practice must keep an admin, or the state has changed",
		"error.413": "The request is too large", "error.422": "Please check your input",
		"error.429": "Too many failed sign-ins. Please wait a moment.",
		"error.500": "An internal error occurred", "error.503": "The service is unavailable for a moment",
		"overview.practice": "Practice", "overview.company_id": "Company id", "overview.plan": "Plan",
		"overview.storage": "Storage", "overview.storage_of": "%s of %s used", "overview.release": "API release",
		"overview.staff":             "Staff members",
		"integrations.intro":         "OAuth clients of your integrators (billing, lab, booking). Grant only the sections an integrator needs.",
		"integrations.list":          "Clients",
		"integrations.name":          "Name",
		"integrations.client_id":     "Client id",
		"integrations.secret":        "Client secret",
		"integrations.scopes":        "Scopes",
		"integrations.all_scopes":    "all",
		"integrations.created":       "Created",
		"integrations.state":         "State",
		"integrations.active":        "active",
		"integrations.revoked":       "revoked",
		"integrations.none":          "No clients yet.",
		"integrations.rotate":        "Rotate secret",
		"integrations.rotate_label":  "Rotate the secret of %s",
		"integrations.revoke":        "Revoke",
		"integrations.revoke_label":  "Revoke %s",
		"integrations.create":        "New client",
		"integrations.create_button": "Create client",
		"integrations.section":       "Section",
		"integrations.read":          "read",
		"integrations.write":         "write",
		"integrations.overlap":       "The old secret still works until",
		"secret.once":                "Shown only now: copy the secret at once. It will not be shown again.",
		"secret.copy":                "Copy",
		"devices.intro":              "Devices and the GDT bridge upload examination results with the practice's upload secret.",
		"devices.doors":              "Upload addresses",
		"devices.secret":             "Upload secret",
		"devices.config":             "Configuration for the GDT bridge",
		"devices.download":           "Download the configuration",
		"devices.rotate":             "Rotate the upload secret",
		"devices.rotate_warning":     "The current secret stops working at once: enter the new one in every device and bridge.",
		"devices.rotate_button":      "Create a new upload secret",
		"audit.intro":                "Who accessed a patient's data, and when? Search by customer id.",
		"audit.customer_id":          "Customer id (empty: every event)",
		"audit.search":               "Search",
		"audit.agent_filter":         "Who (a client id, or gdt / sonogdt for devices; empty: all)",
		"audit.export":               "Export (JSON Lines)",
		"integrations.deprecated":    "Calls to deprecated operations",
		"integrations.operation":     "Operation",
		"integrations.day":           "Day",
		"integrations.calls":         "Calls",
		"devices.uploads":            "Recent uploads (in the audit trail)",
		"audit.events":               "Events",
		"audit.time":                 "Time (UTC)",
		"audit.agent":                "Who",
		"audit.action":               "Action",
		"audit.section":              "Section",
		"audit.object":               "Object",
		"audit.outcome":              "Outcome",
		"audit.customers":            "Customers",
		"audit.none":                 "No events.",
		"audit.more":                 "More events",
		"staff.members":              "Staff members",
		"staff.email":                "E-mail",
		"staff.role":                 "Role",
		"staff.role_of":              "Role of %s",
		"staff.change_role":          "Change role",
		"staff.remove":               "Remove",
		"staff.remove_label":         "Remove %s",
		"staff.invites":              "Open invitations",
		"staff.until":                "valid until",
		"staff.invite":               "Invite someone",
		"staff.invite_button":        "Create an invitation link",
		"staff.link_once":            "Invitation link (shown only now, valid 72 hours, usable once)",
		"staff.passkeys":             "Your passkeys",
		"staff.added":                "added",
		"staff.last_used":            "last used",
		"staff.add_passkey":          "Add another passkey",
	},
}

// language is the request's language: the cookie the person set, else the
// first of the browser's languages the site speaks, else German.
func language(c *fiber.Ctx) string {
	if l := c.Cookies(languageCookie); messages[l] != nil {
		return l
	}
	for _, part := range strings.Split(c.Get(fiber.HeaderAcceptLanguage), ",") {
		tag, _, _ := strings.Cut(strings.TrimSpace(part), ";")
		base, _, _ := strings.Cut(strings.ToLower(tag), "-")
		if messages[base] != nil {
			return base
		}
	}
	return "de"
}

// translate looks key up in lang; a missing key shows itself (the test of
// the catalogue finds it first).
func translate(lang, key string, args ...any) string {
	m, ok := messages[lang][key]
	if !ok {
		return key
	}
	if len(args) > 0 {
		return fmt.Sprintf(m, args...)
	}
	return m
}

func (s *Site) t(c *fiber.Ctx, key string) string { return translate(language(c), key) }
