--
-- PostgreSQL database dump
--

\restrict dUKKbg3lgStB70c0b8sCWqKt8KEu7vyUqMatYEM9MCfmOmEIWG3XkNXlRetxZIy

-- Dumped from database version 15.18 (Debian 15.18-0+deb12u1)
-- Dumped by pg_dump version 15.18 (Debian 15.18-0+deb12u1)

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

--
-- Name: upgrade_from_rev; Type: SCHEMA; Schema: -; Owner: -
--

CREATE SCHEMA upgrade_from_rev;


SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: idempotency_keys; Type: TABLE; Schema: upgrade_from_rev; Owner: -
--

CREATE TABLE upgrade_from_rev.idempotency_keys (
    owner text NOT NULL,
    key text NOT NULL,
    fingerprint bytea NOT NULL,
    pet_id bigint NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    CONSTRAINT idempotency_keys_fingerprint_sha256 CHECK ((octet_length(fingerprint) = 32)),
    CONSTRAINT idempotency_keys_key_length CHECK (((char_length(key) >= 1) AND (char_length(key) <= 255)))
);


--
-- Name: pet_count; Type: TABLE; Schema: upgrade_from_rev; Owner: -
--

CREATE TABLE upgrade_from_rev.pet_count (
    singleton boolean DEFAULT true NOT NULL,
    n bigint NOT NULL,
    CONSTRAINT pet_count_one_row CHECK (singleton)
);


--
-- Name: pets; Type: TABLE; Schema: upgrade_from_rev; Owner: -
--

CREATE TABLE upgrade_from_rev.pets (
    id bigint NOT NULL,
    name text NOT NULL,
    category_id bigint NOT NULL,
    status text NOT NULL,
    CONSTRAINT pets_category_id_positive CHECK ((category_id > 0)),
    CONSTRAINT pets_name_length CHECK (((char_length(name) >= 1) AND (char_length(name) <= 100))),
    CONSTRAINT pets_name_no_control CHECK ((name !~ '[\x01-\x1f\x7f]'::text)),
    CONSTRAINT pets_name_not_blank CHECK ((name ~ '[^ ]'::text)),
    CONSTRAINT pets_status_valid CHECK ((status = ANY (ARRAY['available'::text, 'pending'::text, 'sold'::text])))
);


--
-- Name: pets_id_seq; Type: SEQUENCE; Schema: upgrade_from_rev; Owner: -
--

ALTER TABLE upgrade_from_rev.pets ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME upgrade_from_rev.pets_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: petstore_schema_version; Type: TABLE; Schema: upgrade_from_rev; Owner: -
--

CREATE TABLE upgrade_from_rev.petstore_schema_version (
    version integer NOT NULL
);


--
-- Data for Name: idempotency_keys; Type: TABLE DATA; Schema: upgrade_from_rev; Owner: -
--

INSERT INTO upgrade_from_rev.idempotency_keys VALUES ('16a039b64de7e722cfa764e98691a8acc2b76219f63de16c19cf086b43b4687a', 'upgrade-1', '\xa7001ec4cb27806b8a7874a405c0a65d7f044a6be06f72957cb89d0d941248fb', 4, '2026-12-27 20:38:01.984236+00');


--
-- Data for Name: pet_count; Type: TABLE DATA; Schema: upgrade_from_rev; Owner: -
--

INSERT INTO upgrade_from_rev.pet_count VALUES (true, 5);


--
-- Data for Name: pets; Type: TABLE DATA; Schema: upgrade_from_rev; Owner: -
--

INSERT INTO upgrade_from_rev.pets OVERRIDING SYSTEM VALUE VALUES (1, 'Rex', 1, 'available');
INSERT INTO upgrade_from_rev.pets OVERRIDING SYSTEM VALUE VALUES (2, 'Tom "the cat" <&>', 2, 'pending');
INSERT INTO upgrade_from_rev.pets OVERRIDING SYSTEM VALUE VALUES (3, 'רקס‏ 🐈‍⬛ é', 9223372036854775807, 'sold');
INSERT INTO upgrade_from_rev.pets OVERRIDING SYSTEM VALUE VALUES (4, 'Keyed', 7, 'sold');
INSERT INTO upgrade_from_rev.pets OVERRIDING SYSTEM VALUE VALUES (5, 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx', 3, 'available');


--
-- Data for Name: petstore_schema_version; Type: TABLE DATA; Schema: upgrade_from_rev; Owner: -
--

INSERT INTO upgrade_from_rev.petstore_schema_version VALUES (4);


--
-- Name: pets_id_seq; Type: SEQUENCE SET; Schema: upgrade_from_rev; Owner: -
--

SELECT pg_catalog.setval('upgrade_from_rev.pets_id_seq', 5, true);


--
-- Name: idempotency_keys idempotency_keys_pkey; Type: CONSTRAINT; Schema: upgrade_from_rev; Owner: -
--

ALTER TABLE ONLY upgrade_from_rev.idempotency_keys
    ADD CONSTRAINT idempotency_keys_pkey PRIMARY KEY (owner, key);


--
-- Name: pet_count pet_count_pkey; Type: CONSTRAINT; Schema: upgrade_from_rev; Owner: -
--

ALTER TABLE ONLY upgrade_from_rev.pet_count
    ADD CONSTRAINT pet_count_pkey PRIMARY KEY (singleton);


--
-- Name: pets pets_name_no_c1_or_bidi_control; Type: CHECK CONSTRAINT; Schema: upgrade_from_rev; Owner: -
--

ALTER TABLE upgrade_from_rev.pets
    ADD CONSTRAINT pets_name_no_c1_or_bidi_control CHECK ((name !~ '[\u0080-\u009f\u202a-\u202e\u2066-\u2069]'::text)) NOT VALID;


--
-- Name: pets pets_name_not_only_white_space; Type: CHECK CONSTRAINT; Schema: upgrade_from_rev; Owner: -
--

ALTER TABLE upgrade_from_rev.pets
    ADD CONSTRAINT pets_name_not_only_white_space CHECK ((name ~ '[^\u0009-\u000d\u0020\u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]'::text)) NOT VALID;


--
-- Name: pets pets_pkey; Type: CONSTRAINT; Schema: upgrade_from_rev; Owner: -
--

ALTER TABLE ONLY upgrade_from_rev.pets
    ADD CONSTRAINT pets_pkey PRIMARY KEY (id);


--
-- Name: idempotency_keys_expires_at; Type: INDEX; Schema: upgrade_from_rev; Owner: -
--

CREATE INDEX idempotency_keys_expires_at ON upgrade_from_rev.idempotency_keys USING btree (expires_at);


--
-- Name: pets_status_id; Type: INDEX; Schema: upgrade_from_rev; Owner: -
--

CREATE INDEX pets_status_id ON upgrade_from_rev.pets USING btree (status, id);


--
-- Name: idempotency_keys idempotency_keys_pet_id_fkey; Type: FK CONSTRAINT; Schema: upgrade_from_rev; Owner: -
--

ALTER TABLE ONLY upgrade_from_rev.idempotency_keys
    ADD CONSTRAINT idempotency_keys_pet_id_fkey FOREIGN KEY (pet_id) REFERENCES upgrade_from_rev.pets(id);


--
-- PostgreSQL database dump complete
--

\unrestrict dUKKbg3lgStB70c0b8sCWqKt8KEu7vyUqMatYEM9MCfmOmEIWG3XkNXlRetxZIy

