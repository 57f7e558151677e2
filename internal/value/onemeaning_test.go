package value_test

import (
	"fmt"
	"go/ast"
	"go/types"
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
)

// The module's packages and what they may not do outside package value:
// the one meaning of a value is written once (issue 59).
const module = "github.com/petstore/petstore"

// A rule names what only package value does, and how to find it: a
// selection or a call that the type checker resolves to one of its
// objects.
type rule struct {
	what string
	// hit reports whether obj, the object an identifier of a selector
	// expression uses, breaks the rule.
	hit func(obj types.Object) bool
}

var rules = []rule{
	{"reads a schema's default (package value applies defaults: value.Default, value.Normalize)", func(obj types.Object) bool {
		v, ok := obj.(*types.Var)
		return ok && v.IsField() && v.Name() == "Default" && fieldOf(v, "github.com/getkin/kin-openapi/openapi3", "Schema")
	}},
	{"compares with reflect.DeepEqual (compare JSON values by value.Equal, or by their canonical text)", func(obj types.Object) bool {
		return isFunc(obj, "reflect", "DeepEqual")
	}},
	{"reads a number as a float (package value says what a number is: value.Equal, value.Canonical)", func(obj types.Object) bool {
		return isFunc(obj, "strconv", "ParseFloat") || isMethod(obj, "encoding/json", "Number", "Float64")
	}},
	{"writes values or numbers with package canon (package value writes them by their schema)", func(obj types.Object) bool {
		f, ok := obj.(*types.Func)
		return ok && f.Pkg() != nil && f.Pkg().Path() == module+"/internal/value/canon" &&
			slices.Contains([]string{"Append", "AppendAsIs", "ParseDecimal", "Number", "FloatDecimal"}, f.Name())
	}},
}

// TestOneMeaning: no package but value (and canon, under it) applies
// defaults, reads numbers as floats, writes numbers canonically or
// compares decoded JSON with reflect.DeepEqual, in the module's
// non-test code: a second meaning of a value cannot creep back (issue 59).
func TestOneMeaning(t *testing.T) {
	if testing.Short() {
		t.Skip("loads and type-checks every package of the module")
	}
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedFiles | packages.NeedSyntax | packages.NeedTypes | packages.NeedTypesInfo, Dir: "../.."}
	pkgs, err := packages.Load(cfg, "./...")
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) < 50 {
		t.Fatalf("loaded %d packages: the module has more", len(pkgs))
	}
	var found []string
	for _, p := range pkgs {
		if strings.Contains(p.PkgPath, "/testdata/") {
			continue
		}
		for _, e := range p.Errors {
			t.Errorf("%s: %v", p.PkgPath, e)
		}
		if strings.HasPrefix(p.PkgPath, module+"/internal/value") || strings.HasPrefix(p.PkgPath, module+"/gen") {
			continue
		}
		for _, f := range p.Syntax {
			found = append(found, breaches(p, f)...)
		}
	}
	for _, b := range found {
		t.Error(b)
	}
}

// TestOneMeaningFinds: the rules find each breach of testdata/breach, and
// nothing it does that they allow.
func TestOneMeaningFinds(t *testing.T) {
	pkgs, err := packages.Load(&packages.Config{Mode: packages.NeedName | packages.NeedSyntax | packages.NeedTypes | packages.NeedTypesInfo}, "./testdata/breach")
	if err != nil || len(pkgs) != 1 || len(pkgs[0].Errors) > 0 {
		t.Fatalf("%v %v", pkgs, err)
	}
	var got []string
	for _, f := range pkgs[0].Syntax {
		for _, b := range breaches(pkgs[0], f) {
			_, at, _ := strings.Cut(b, ": ")
			got = append(got, strings.Join(strings.Fields(at)[:2], " "))
		}
	}
	want := []string{"Default reads", "Same compares", "Float reads", "Float reads", "Write writes"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// breaches are the rules f breaks, each with where and in which function.
func breaches(p *packages.Package, f *ast.File) []string {
	var out []string
	for _, d := range f.Decls {
		fn := "(top level)"
		if fd, ok := d.(*ast.FuncDecl); ok {
			fn = fd.Name.Name
		}
		ast.Inspect(d, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			obj := p.TypesInfo.Uses[sel.Sel]
			for _, r := range rules {
				if obj != nil && r.hit(obj) {
					out = append(out, fmt.Sprintf("%s: %s %s", p.Fset.Position(sel.Pos()), fn, r.what))
				}
			}
			return true
		})
	}
	return out
}

func fieldOf(v *types.Var, pkg, typ string) bool {
	return v.Pkg() != nil && v.Pkg().Path() == pkg && v.Origin() != nil && structHas(v.Pkg().Scope().Lookup(typ), v)
}

func structHas(obj types.Object, v *types.Var) bool {
	if obj == nil {
		return false
	}
	st, ok := obj.Type().Underlying().(*types.Struct)
	if !ok {
		return false
	}
	for i := range st.NumFields() {
		if st.Field(i) == v {
			return true
		}
	}
	return false
}

func isFunc(obj types.Object, pkg, name string) bool {
	f, ok := obj.(*types.Func)
	return ok && f.Pkg() != nil && f.Pkg().Path() == pkg && f.Name() == name && f.Type().(*types.Signature).Recv() == nil
}

func isMethod(obj types.Object, pkg, typ, name string) bool {
	f, ok := obj.(*types.Func)
	if !ok || f.Name() != name || f.Pkg() == nil || f.Pkg().Path() != pkg {
		return false
	}
	recv := f.Type().(*types.Signature).Recv()
	if recv == nil {
		return false
	}
	t := recv.Type()
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	n, ok := t.(*types.Named)
	return ok && n.Obj().Name() == typ
}
