package httpapi

import (
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/petstore/petstore/gen"
)

// TestRequireBearer: the embedded spec's operations require the key, an
// operation made public by its own security: [] requires none, and each
// other way a spec could change its security fails New's check: the
// validator no longer checks security, so requireBearer is what keeps the
// two in step.
func TestRequireBearer(t *testing.T) {
	spec, err := gen.GetSpec()
	if err != nil {
		t.Fatal(err)
	}
	for path, item := range spec.Paths.Map() {
		for method, op := range item.Operations() {
			if auth, err := requireBearer(spec, op); !auth || err != nil {
				t.Errorf("%s %s: requires the key %v, %v", method, path, auth, err)
			}
		}
	}

	bearer := openapi3.SecurityRequirement{bearerScheme: {}}
	other := openapi3.SecurityRequirement{"apiKey": {}}
	scheme := func(typ, name string) *openapi3.SecuritySchemeRef {
		return &openapi3.SecuritySchemeRef{Value: &openapi3.SecurityScheme{Type: typ, Scheme: name}}
	}
	for _, tc := range []struct {
		name      string
		global    openapi3.SecurityRequirements
		op        *openapi3.SecurityRequirements // nil: the global one applies
		declared  *openapi3.SecuritySchemeRef
		wantError bool
		public    bool
	}{
		{name: "global bearer", global: openapi3.SecurityRequirements{bearer}, declared: scheme("http", "bearer")},
		{name: "operation's own bearer", op: &openapi3.SecurityRequirements{bearer}, declared: scheme("http", "Bearer")},
		{name: "no security at all", wantError: true, declared: scheme("http", "bearer")},
		{name: "operation made public", global: openapi3.SecurityRequirements{bearer}, op: &openapi3.SecurityRequirements{}, declared: scheme("http", "bearer"), public: true},
		{name: "public with no global security", op: &openapi3.SecurityRequirements{}, public: true},
		{name: "key optional", global: openapi3.SecurityRequirements{bearer, {}}, declared: scheme("http", "bearer"), wantError: true},
		{name: "another scheme", global: openapi3.SecurityRequirements{other}, declared: scheme("http", "bearer"), wantError: true},
		{name: "bearer and another", global: openapi3.SecurityRequirements{{bearerScheme: {}, "apiKey": {}}}, declared: scheme("http", "bearer"), wantError: true},
		{name: "bearerAuth undeclared", global: openapi3.SecurityRequirements{bearer}, wantError: true},
		{name: "bearerAuth an API key", global: openapi3.SecurityRequirements{bearer}, declared: scheme("apiKey", "bearer"), wantError: true},
		{name: "bearerAuth basic", global: openapi3.SecurityRequirements{bearer}, declared: scheme("http", "basic"), wantError: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &openapi3.T{Security: tc.global, Components: &openapi3.Components{SecuritySchemes: openapi3.SecuritySchemes{}}}
			if tc.declared != nil {
				s.Components.SecuritySchemes[bearerScheme] = tc.declared
			}
			auth, err := requireBearer(s, &openapi3.Operation{Security: tc.op})
			if (err != nil) != tc.wantError {
				t.Errorf("requireBearer = %v, want an error: %v", err, tc.wantError)
			}
			if err == nil && auth == tc.public {
				t.Errorf("requireBearer: requires the key %v, want %v", auth, !tc.public)
			}
		})
	}
}
