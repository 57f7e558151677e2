-- The rule on a name's characters, widened to Unicode as in internal/pets and
-- openapi.yaml (PetName): no C1 control (001 refuses C0 and DEL), no explicit
-- bidirectional override, embedding or isolate, and not only Unicode white
-- space (White_Space; 001 refuses only spaces). NOT VALID: rows stored under
-- the older rule stay readable, and the migration does not scan the table;
-- every row written from now on is checked.
alter table pets
    add constraint pets_name_no_c1_or_bidi_control
        check (name !~ '[\u0080-\u009f\u202a-\u202e\u2066-\u2069]') not valid,
    add constraint pets_name_not_only_white_space
        check (name ~ '[^\u0009-\u000d\u0020\u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]') not valid;

---- create above / drop below ----

alter table pets
    drop constraint pets_name_no_c1_or_bidi_control,
    drop constraint pets_name_not_only_white_space;
