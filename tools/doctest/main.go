// Command doctest checks the project's Markdown (internal/doctest).
//
//	doctest check [FILE.md ...]   every relative link and anchor resolves, every shell block is marked (make lint)
//	doctest run [FILE.md ...]     run the marked shell blocks as written (make test-docs)
//
// Without files, every Markdown file of the repository (git ls-files,
// untracked ones included). Run it from the repository's root.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/petstore/petstore/internal/doctest"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "doctest:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 || (args[0] != "check" && args[0] != "run") {
		return errors.New("usage: doctest check|run [FILE.md ...]")
	}
	fs := flag.NewFlagSet("doctest "+args[0], flag.ContinueOnError)
	petstore := fs.String("petstore", "", "run: the server binary (default: built from ./cmd/petstore into a temporary directory)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	root, err := os.Getwd()
	if err != nil {
		return err
	}
	files := fs.Args()
	if len(files) == 0 {
		if files, err = doctest.MarkdownFiles(root); err != nil {
			return err
		}
	}

	if args[0] == "check" {
		probs, err := doctest.Check(root, files)
		if err != nil {
			return err
		}
		for _, p := range probs {
			fmt.Println(p)
		}
		if len(probs) > 0 {
			return fmt.Errorf("%d problem(s) in %d Markdown file(s)", len(probs), len(files))
		}
		return nil
	}

	var docs []*doctest.Doc
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		d, err := doctest.Parse(filepath.ToSlash(filepath.Clean(f)), src)
		if err != nil {
			return err
		}
		docs = append(docs, d)
	}
	if *petstore == "" {
		tmp, err := os.MkdirTemp("", "doctest-bin-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		*petstore = filepath.Join(tmp, "petstore")
		build := exec.Command("go", "build", "-o", *petstore, "./cmd/petstore")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("building the server: %w", err)
		}
	} else if *petstore, err = filepath.Abs(*petstore); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	r := &doctest.Runner{
		Root:            root,
		Petstore:        *petstore,
		Out:             os.Stdout,
		Postgres:        doctest.PostgresAvailable(),
		RequirePostgres: os.Getenv("CI") == "true",
	}
	res := r.Run(ctx, docs)
	fmt.Printf("doctest: %s\n", res)
	if res.Failed > 0 {
		return errors.New("a documented block failed")
	}
	return nil
}
