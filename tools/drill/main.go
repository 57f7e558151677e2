// Command drill is the machinery of the evolution drill (issue 50,
// `make evolve-drill`, .ci/evolve-drill): each change of openapi.yaml it
// knows, and the checks of a tree that made it through the running binary.
//
//	drill edit VARIANT [FILE]           make the change to openapi.yaml (FILE), nothing else
//	drill show VARIANT                  the variant's members, the raise the gate must name, what a create sends
//	drill stores VARIANT URL STATE      create, get, list and replay a pet with the members, through the server
//	                                    at URL (its base path included; the key in PETSTORE_CONFORM_KEY): each
//	                                    answer must carry them as sent, and the key with one left out is refused
//	                                    422; then the flow of the variant's operation (deletePet: a pet deleted,
//	                                    then 404, listed no more, its keyed create replayed). STATE keeps the
//	                                    pets and their keys: run again with the same STATE (after a restart) to
//	                                    read and replay them again
//	drill blind VARIANT LISTEN URL      a proxy to URL that forgets the members in every answer, and answers the
//	                                    variant's operation done without sending it on: the kit run through it
//	                                    must fail a check it passes through the relay, or it did not judge them
//	drill relay VARIANT LISTEN URL      the same proxy, forgetting nothing
//	drill files VARIANT FILE...         hold the hand-written files the change needed beside the spec to what it
//	                                    may need: none, or for an operation its code's files, each the handler,
//	                                    a store or a migration
//
// The variants: a (pattern, chip) an optional string member with a
// pattern; b (array, tags) an optional array of strings with maxItems and
// uniqueItems; c (object, size) an optional object of two scalars; d (enum)
// a new value of PetStatus, reserved; e (delete) the operation DELETE
// /pets/{petId}, deletePet, with the code a person writes for it
// (testdata/e: the handler, the stores, a migration) and its plant, the
// operation made a no-op; g to l (values.go) members whose value is not
// their text: a nested default, an array of objects, a float, a date-time,
// a nullable string, a oneOf. Several letters (abcde) are their changes
// made together.
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
		return fmt.Errorf("usage: drill edit|show|stores|blind|relay|files ARGS... (see go doc ./tools/drill)")
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
		fmt.Println(v.show())
		return nil
	case cmd == "files":
		return filesCmd(os.Stdout, v, args)
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

// show is the variant in one line of NAME=VALUE words, as the drill's
// script reads it: the members, the raise, what drill blind forgets; with
// an operation, its id, the patches of its code and of its plant, the
// packages whose tests must catch the plant, and whether the kit must
// judge it; then each member's value.
func (v variant) show() string {
	words := []string{"members=" + v.memberNames(), "raise=" + v.Raise, "forgets=" + v.forgotten()}
	if v.Op != nil {
		kit := "pending"
		if v.Op.KitJudges {
			kit = "judges"
		}
		words = append(words, "operation="+v.Op.ID, "code="+v.Op.Code, "plant="+v.Op.Plant,
			"plantpkgs="+strings.Join(v.Op.PlantPackages, ","), "kit="+kit)
	}
	for _, m := range v.Members {
		words = append(words, m.Name+"="+m.Value)
	}
	return strings.Join(words, " ") + " "
}

func (v variant) describe() string {
	var says []string
	if v.Op != nil {
		says = append(says, fmt.Sprintf("%s gains the operation %s (%s)", v.Op.Path, v.Op.ID, v.Op.Method))
	}
	for _, m := range v.Members {
		if m.Name == "status" {
			says = append(says, "PetStatus gains the value "+strings.Trim(m.Value, `"`))
		} else {
			says = append(says, "NewPet and Pet gain the "+map[bool]string{true: "required", false: "optional"}[v.requires(m.Name)]+" member "+m.Name)
		}
	}
	return strings.Join(says, "; ")
}
