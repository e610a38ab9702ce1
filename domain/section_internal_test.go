package domain

import "testing"

// TestDeprecatedFieldIsDeclaredOnBothSchemas: a field the table deprecates
// carries its dates on the create schema and the answered one, which the
// document, the headers and the contract check read.
func TestDeprecatedFieldIsDeclaredOnBothSchemas(t *testing.T) {
	t.Parallel()
	k := deprecated(record[Note]("old-notes", exampleNote), "title", "2026-11-24", "2027-01-05")
	for name, schema := range map[string]map[string]any{"input": k.Schemas().Input, "output": k.Schemas().Output} {
		title := schema["properties"].(map[string]any)["title"].(map[string]any)
		if title["deprecated"] != true || title["x-deprecated-at"] != "2026-11-24" || title["x-sunset"] != "2027-01-05" {
			t.Errorf("%s schema of title: %v", name, title)
		}
		if text := schema["properties"].(map[string]any)["text"].(map[string]any); text["deprecated"] != nil {
			t.Errorf("%s schema: text is deprecated too: %v", name, text)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("deprecating a field the kind does not have was accepted")
		}
	}()
	deprecated(record[Note]("old-notes", exampleNote), "no_such_field", "2026-11-24", "2027-01-05")
}
