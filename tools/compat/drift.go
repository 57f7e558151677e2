package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// drift lists the files of gen that differ from a fresh generation in
// fresh (every file make generate writes, written there instead with
// GEN_OUT): the working tree's files are compared, committed or not.
func drift(gen, fresh string) ([]string, error) {
	entries, err := os.ReadDir(fresh)
	if err != nil {
		return nil, err
	}
	if len(entries) == 0 {
		return nil, fmt.Errorf("%s: the fresh generation is empty", fresh)
	}
	var differ []string
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		want, err := os.ReadFile(filepath.Join(fresh, e.Name()))
		if err != nil {
			return nil, err
		}
		name := filepath.Join(gen, e.Name())
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
