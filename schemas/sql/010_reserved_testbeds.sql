-- perfwatch store, schema version 10: reserved for the testbeds work
-- (issue 12, branch of its own). Empty here so that version 11 can be
-- numbered as agreed; the testbeds branch's 010 replaces this file when the
-- two are merged (a database made by this branch alone is a test database).
SELECT 1;
