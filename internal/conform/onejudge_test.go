package conform_test

import (
	"fmt"
	"go/ast"
	"go/types"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
)

// One judge per promise (issue 59): a case of the kit says what status (and
// Error code) it wants of its own request; what an answer's body shows is
// the checker's to judge (internal/check, fed the kit's history). These
// are the files of cases: package cases, and the runner's files that send
// cases of their own.
var caseFiles = []string{"state.go", "idempotency.go", "timing.go", "examples.go", "readback.go", "unmodelled.go"}

const conformPkg = "github.com/petstore/petstore/internal/conform"

// bodyReads are what a case may not touch: an answer's body, and the
// history's reading of it. A case drives on with ids the history read
// (judge.Exchange.CreatedID, ListedIDs), which judge nothing.
var bodyReads = []struct {
	what string
	hit  func(obj types.Object) bool
}{
	{"reads an answer's body (wire.Exchange.Body): the checker judges bodies; a case wants a status", func(obj types.Object) bool {
		return isField(obj, conformPkg+"/wire", "Exchange", "Body")
	}},
	{"reads the pets the history read of an answer: the checker judges them", func(obj types.Object) bool {
		return isField(obj, "github.com/petstore/petstore/internal/history", "Kit", "Got") ||
			isField(obj, "github.com/petstore/petstore/internal/history", "Kit", "GotID") ||
			isField(obj, "github.com/petstore/petstore/internal/history", "Kit", "Answers") ||
			isField(obj, "github.com/petstore/petstore/internal/history", "Op", "Pet") ||
			isField(obj, "github.com/petstore/petstore/internal/history", "Op", "Pets")
	}},
	{"decodes a pet of an answer (judge.PetID, AnswerMembers, AnswerPet): the checker judges it", func(obj types.Object) bool {
		f, ok := obj.(*types.Func)
		return ok && f.Pkg() != nil && strings.HasPrefix(f.Pkg().Path(), conformPkg) && slices.Contains([]string{"PetID", "AnswerMembers", "AnswerPet"}, f.Name())
	}},
}

// breach is planted in package cases (an overlay) to prove the lint: each
// way of judging a body it has is found.
const breach = `package cases

import (
	"encoding/json"

	"github.com/petstore/petstore/internal/conform/judge"
)

func plantedDecode(x *judge.Exchange) bool {
	var v any
	return json.Unmarshal(x.Body, &v) == nil
}

func plantedID(x *judge.Exchange) bool {
	id, _ := judge.PetID(x.Exchange.Body)
	return id > 0 && len(x.Body) > 0
}

func plantedHop(x *judge.Exchange) bool { return x.Hop.Got["name"] != "" }
`

// TestCasesJudgeNoBody: no case of the kit reads an answer's body but for
// its length (a preflight's empty body), nor the pets the history read: a
// second judge of a promise the checker judges cannot creep back into
// the cases. A breach planted in package cases is found, each of its
// reads.
func TestCasesJudgeNoBody(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("loads and type-checks the kit's packages")
	}
	planted, err := filepath.Abs("cases/zz_planted_breach.go")
	if err != nil {
		t.Fatal(err)
	}
	cfg := &packages.Config{
		Mode:    packages.NeedName | packages.NeedFiles | packages.NeedSyntax | packages.NeedTypes | packages.NeedTypesInfo,
		Overlay: map[string][]byte{planted: []byte(breach)},
	}
	pkgs, err := packages.Load(cfg, ".", "./cases")
	if err != nil {
		t.Fatal(err)
	}
	var found, plantedFound []string
	files := 0
	for _, p := range pkgs {
		for _, e := range p.Errors {
			t.Fatalf("%s: %v", p.PkgPath, e)
		}
		for _, f := range p.Syntax {
			name := p.Fset.Position(f.Pos()).Filename
			if p.PkgPath == conformPkg && !slices.Contains(caseFiles, filepath.Base(name)) {
				continue
			}
			files++
			for _, b := range bodyBreaches(p, f) {
				if name == planted {
					plantedFound = append(plantedFound, b)
				} else {
					found = append(found, b)
				}
			}
		}
	}
	if files < len(caseFiles)+20 {
		t.Errorf("linted %d files: the cases are more", files)
	}
	for _, b := range found {
		t.Error(b)
	}
	var where []string
	for _, b := range plantedFound {
		_, at, _ := strings.Cut(b, ": ")
		where = append(where, strings.Fields(at)[0])
	}
	want := []string{"plantedDecode", "plantedID", "plantedID", "plantedHop"}
	if !slices.Equal(where, want) {
		t.Errorf("the planted breach: found %q, want %q", plantedFound, want)
	}
}

// bodyBreaches are the reads of f that bodyReads forbid, each with where
// and in which function; an answer's body as len's argument is allowed.
func bodyBreaches(p *packages.Package, f *ast.File) []string {
	var out []string
	for _, d := range f.Decls {
		fn := "(top level)"
		if fd, ok := d.(*ast.FuncDecl); ok {
			fn = fd.Name.Name
		}
		lenArgs := map[ast.Expr]bool{}
		ast.Inspect(d, func(n ast.Node) bool {
			if call, ok := n.(*ast.CallExpr); ok && len(call.Args) == 1 {
				if id, ok := call.Fun.(*ast.Ident); ok {
					if _, builtin := p.TypesInfo.Uses[id].(*types.Builtin); builtin && id.Name == "len" {
						lenArgs[call.Args[0]] = true
					}
				}
			}
			sel, ok := n.(*ast.SelectorExpr)
			if !ok || lenArgs[sel] {
				return true
			}
			obj := p.TypesInfo.Uses[sel.Sel]
			for _, r := range bodyReads {
				if obj != nil && r.hit(obj) {
					out = append(out, fmt.Sprintf("%s: %s %s", p.Fset.Position(sel.Pos()), fn, r.what))
				}
			}
			return true
		})
	}
	return out
}

// isField reports whether obj is field name of the struct typ of pkg.
func isField(obj types.Object, pkg, typ, name string) bool {
	v, ok := obj.(*types.Var)
	if !ok || !v.IsField() || v.Name() != name || v.Pkg() == nil || v.Pkg().Path() != pkg {
		return false
	}
	o := v.Pkg().Scope().Lookup(typ)
	if o == nil {
		return false
	}
	st, ok := o.Type().Underlying().(*types.Struct)
	if !ok {
		return false
	}
	for i := range st.NumFields() {
		if st.Field(i) == v.Origin() {
			return true
		}
	}
	return false
}
