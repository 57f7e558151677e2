package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// drift lists the files of gen that differ from a fresh generation in
// fresh (every file make generate writes, written there instead with
// GEN_OUT, in gen's subdirectories too: gen/shape): the working tree's
// files are compared, committed or not.
func drift(gen, fresh string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(fresh, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: the fresh generation is empty", fresh)
	}
	var differ []string
	for _, path := range files {
		want, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		rel, err := filepath.Rel(fresh, path)
		if err != nil {
			return nil, err
		}
		name := filepath.Join(gen, rel)
		got, err := os.ReadFile(name)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		if err != nil || !bytes.Equal(got, want) {
			differ = append(differ, filepath.ToSlash(name))
		}
	}
	slices.Sort(differ)
	return differ, nil
}
