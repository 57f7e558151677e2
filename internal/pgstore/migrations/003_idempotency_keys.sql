-- The outcomes of creates sent with an Idempotency-Key: who sent the key
-- (the API key's digest in hex), the key, the SHA-256 of the normalized
-- request, the pet it created, and when the record expires. Written in the
-- transaction that inserts the pet; the primary key decides races.
create table idempotency_keys (
    owner       text        not null,
    key         text        not null
        constraint idempotency_keys_key_length check (char_length(key) between 1 and 255),
    fingerprint bytea       not null
        constraint idempotency_keys_fingerprint_sha256 check (octet_length(fingerprint) = 32),
    pet_id      bigint      not null references pets (id),
    expires_at  timestamptz not null,
    primary key (owner, key)
);

-- Expired rows are removed a few at a time by each idempotent create,
-- oldest first, through this index: never a scan of the table.
create index idempotency_keys_expires_at on idempotency_keys (expires_at);

---- create above / drop below ----

drop table idempotency_keys;
