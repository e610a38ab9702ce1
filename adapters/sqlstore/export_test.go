package sqlstore

// HotTexts are the texts of the hot statements built so far, by key.
func HotTexts() map[string]string {
	out := map[string]string{}
	hotBuilt.Range(func(k, st any) bool {
		out[k.(string)] = st.(hotStatement).text
		return true
	})
	return out
}

// WirePages is how many pages were read from the wire (decodePage) so far.
func WirePages() int64 { return wirePages.Load() }
