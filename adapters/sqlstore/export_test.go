package sqlstore

// HotTexts are the texts of the hot statements built so far, by key.
func HotTexts() map[string]string {
	hotMu.Lock()
	defer hotMu.Unlock()
	out := make(map[string]string, len(hotBuilt))
	for k, st := range hotBuilt {
		out[k] = st.text
	}
	return out
}
