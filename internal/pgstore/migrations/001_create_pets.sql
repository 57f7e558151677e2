-- The catalogue. Constraints mirror internal/pets and openapi.yaml, so that
-- the database refuses what the API refuses even if a bug let it through.
create table pets (
    id          bigint generated always as identity primary key,
    name        text   not null
        constraint pets_name_length check (char_length(name) between 1 and 100)
        constraint pets_name_no_control check (name !~ '[\x01-\x1f\x7f]')
        constraint pets_name_not_blank check (name ~ '[^ ]'),
    category_id bigint not null
        constraint pets_category_id_positive check (category_id > 0),
    status      text   not null
        constraint pets_status_valid check (status in ('available', 'pending', 'sold'))
);

-- Listing with a status filter walks this index from the cursor: O(limit).
-- Listing without one walks the primary key.
create index pets_status_id on pets (status, id);

---- create above / drop below ----

drop table pets;
