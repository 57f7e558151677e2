-- The number of pets, kept by every create in the transaction that inserts,
-- so that the pet gauge of /metrics costs one row read, not a count(*) scan
-- of the catalogue. Creates already serialise on an advisory lock, so the
-- row adds no contention.
create table pet_count (
    singleton boolean primary key default true
        constraint pet_count_one_row check (singleton),
    n         bigint  not null
);
insert into pet_count (n) select count(*) from pets;

---- create above / drop below ----

drop table pet_count;
