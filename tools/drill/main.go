// Command drill is the machinery of the evolution drill (issue 50,
// `make evolve-drill`, .ci/evolve-drill): each change of openapi.yaml it
// knows, and the checks of a tree that made it through the running binary.
//
//	drill edit VARIANT [FILE]           make the change to openapi.yaml (FILE), nothing else
//	drill show VARIANT                  the variant's members, the raise the gate must name, what a create sends
//	drill stores VARIANT URL STATE      create, get, list and replay a pet with the members, through the server
//	                                    at URL (its base path included; the key in PETSTORE_CONFORM_KEY): each
//	                                    answer must carry them as sent, and the key with one left out is refused
//	                                    422. STATE keeps the pet and its key: run again with the same STATE
//	                                    (after a restart) to read and replay it again
//	drill blind VARIANT LISTEN URL      a proxy to URL that forgets the members in every answer: the kit run
//	                                    through it must fail a check it passes through the relay, or it did not
//	                                    judge them
//	drill relay VARIANT LISTEN URL      the same proxy, forgetting nothing
//
// The variants: a (pattern, chip) an optional string member with a
// pattern; b (array, tags) an optional array of strings with maxItems and
// uniqueItems; c (object, size) an optional object of two scalars; d (enum)
// a new value of PetStatus, reserved. Several letters (abcd) are their
// changes made together.
package main

import (
	"fmt"
	"os"
	"strings"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "drill:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) < 2 {
		return fmt.Errorf("usage: drill edit|show|stores|blind|relay ARGS... (see go doc ./tools/drill)")
	}
	cmd, args := args[0], args[1:]
	v, err := variantByName(args[0])
	if err != nil {
		return err
	}
	args = args[1:]
	switch {
	case cmd == "edit" && len(args) <= 1:
		file := "openapi.yaml"
		if len(args) == 1 {
			file = args[0]
		}
		return editFile(v, file)
	case cmd == "show" && len(args) == 0:
		var values []string
		for _, m := range v.Members {
			values = append(values, m.Name+"="+m.Value)
		}
		fmt.Printf("members=%s raise=%s %s\n", v.memberNames(), v.Raise, strings.Join(values, " "))
		return nil
	case cmd == "stores" && len(args) == 2:
		return storesCmd(os.Stdout, v, args[0], os.Getenv("PETSTORE_CONFORM_KEY"), args[1])
	case (cmd == "blind" || cmd == "relay") && len(args) == 2:
		return blindCmd(v, args[0], args[1], cmd == "blind")
	}
	return fmt.Errorf("%s %s: wrong arguments (see go doc ./tools/drill)", cmd, v.ID)
}

func editFile(v variant, file string) error {
	spec, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	out, err := v.edit(spec)
	if err != nil {
		return fmt.Errorf("%s: variant %s: %w", file, v.ID, err)
	}
	if err := os.WriteFile(file, out, 0o644); err != nil {
		return err
	}
	fmt.Printf("%s: variant %s (%s): %s\n", file, v.ID, v.Name, v.describe())
	return nil
}

func (v variant) describe() string {
	var says []string
	for _, m := range v.Members {
		if m.Name == "status" {
			says = append(says, "PetStatus gains the value "+strings.Trim(m.Value, `"`))
		} else {
			says = append(says, "NewPet and Pet gain the optional member "+m.Name)
		}
	}
	return strings.Join(says, "; ")
}
