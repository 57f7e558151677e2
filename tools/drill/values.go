package main

// The variants of issue 59's values: each a member whose value has a
// meaning of its own by the contract's rules (openapi.yaml, "A member is
// stored and answered as it was sent"), which a server that keeps typed
// values (the plain rival, internal/rival) answers in another spelling. The
// value each create sends is one a typed server spells otherwise.
var valueVariants = []variant{
	{
		// A nested default: the create leaves level out, the pet has 3.
		ID: "g", Name: "nested-default", Members: []member{{"care", `{"note":"walk twice a day"}`}}, Raise: "minor",
		edit: func(spec []byte) ([]byte, error) {
			return memberEdit(spec, "care", `$ref: '#/components/schemas/Care'`, map[string]string{"Care": `
type: object
description: How the animal is cared for.
additionalProperties: false
properties:
  level:
    type: integer
    format: int32
    minimum: 1
    maximum: 5
    default: 3
    description: How much care it needs, 1 (little) to 5 (much).
  note:
    type: string
    maxLength: 64
`})
		},
	},
	{
		// Items out of any order, one with its optional member left out.
		ID: "h", Name: "array-of-objects", Members: []member{{"vaccinations", `[{"vaccine":"rabies","dose":2},{"vaccine":"distemper"}]`}}, Raise: "minor",
		edit: func(spec []byte) ([]byte, error) {
			return memberEdit(spec, "vaccinations", `
type: array
description: The animal's vaccinations, in the order given.
maxItems: 20
items:
  $ref: '#/components/schemas/Vaccination'
`, map[string]string{"Vaccination": `
type: object
description: One vaccination.
additionalProperties: false
required: [vaccine]
properties:
  vaccine:
    type: string
    minLength: 1
    maxLength: 64
  dose:
    type: integer
    format: int32
    minimum: 1
    maximum: 10
`})
		},
	},
	{
		// 12.3 is not a float32: the pet weighs 12.3 as float32 keeps it.
		ID: "i", Name: "float", Members: []member{{"weight", `12.3`}}, Raise: "minor",
		edit: func(spec []byte) ([]byte, error) {
			return memberEdit(spec, "weight", `
type: number
format: float
description: The animal's weight in kilograms.
`, nil)
		},
	},
	{
		// An offset and a fraction with a trailing zero: the same instant
		// in UTC is the same value.
		ID: "j", Name: "date-time", Members: []member{{"bornAt", `"2024-02-29T10:30:00.50+02:00"`}}, Raise: "minor",
		edit: func(spec []byte) ([]byte, error) {
			return memberEdit(spec, "bornAt", `
type: string
format: date-time
maxLength: 40
description: When the animal was born.
`, nil)
		},
	},
	{
		ID: "k", Name: "nullable", Members: []member{{"nickname", `"Rex"`}}, Raise: "minor",
		edit: func(spec []byte) ([]byte, error) {
			return memberEdit(spec, "nickname", `
type: string
nullable: true
maxLength: 32
description: What the animal answers to; null or left out when it has none.
`, nil)
		},
	},
	{
		// The second of two schemas, its members out of order.
		ID: "l", Name: "oneOf", Members: []member{{"keeper", `{"name":"Ada","email":"ada@example.com"}`}}, Raise: "minor",
		edit: func(spec []byte) ([]byte, error) {
			return memberEdit(spec, "keeper", `$ref: '#/components/schemas/Keeper'`, map[string]string{"Keeper": `
description: Who keeps the animal, reached by phone or by email.
oneOf:
  - $ref: '#/components/schemas/PhoneKeeper'
  - $ref: '#/components/schemas/EmailKeeper'
`, "PhoneKeeper": `
type: object
additionalProperties: false
required: [name, phone]
properties:
  name:
    type: string
    minLength: 1
    maxLength: 64
  phone:
    type: string
    maxLength: 16
    pattern: '^\+[0-9]{6,15}$'
`, "EmailKeeper": `
type: object
additionalProperties: false
required: [name, email]
properties:
  name:
    type: string
    minLength: 1
    maxLength: 64
  email:
    type: string
    maxLength: 64
    pattern: '^[^@ ]+@[^@ ]+$'
`})
		},
	},
}

func init() { variants = append(variants, valueVariants...) }
