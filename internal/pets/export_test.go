package pets

// SetExtraDefaults replaces the defaults of Extra's members (gen/shape's)
// until the returned function restores them.
func SetExtraDefaults(d map[string]string) (restore func()) {
	old := extraDefaults
	extraDefaults = d
	return func() { extraDefaults = old }
}
