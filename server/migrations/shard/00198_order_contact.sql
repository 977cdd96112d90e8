-- +goose Up
-- Where the buyer of an order hears about it (issue 25 §1, decision 0430):
-- a mobile number in E.164 for SMS, an e-mail address, and the language of
-- the messages. Given at checkout (CreateOrder), optional, never changed;
-- carried in OrderCreated and BookingConfirmed, from which the
-- notifications projector keeps what it needs. All NULL for an order
-- without a contact (and every order made before). Columns of orders, not a
-- table of their own: one order has one contact, and a show's move copies
-- the orders already.
ALTER TABLE orders
    ADD COLUMN contact_phone text CHECK (contact_phone ~ '^\+[1-9][0-9]{6,14}$'),
    ADD COLUMN contact_email text CHECK (char_length(contact_email) BETWEEN 3 AND 254),
    ADD COLUMN contact_lang  text CHECK (contact_lang IN ('en', 'bn'));

-- +goose Down
ALTER TABLE orders DROP COLUMN contact_phone, DROP COLUMN contact_email, DROP COLUMN contact_lang;
