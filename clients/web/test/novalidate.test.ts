// The generated code works with validate.proto's stand-in (decision 0470):
// run.mjs bundles this test with the same plugin as the site, so what it
// imports here is what the site runs.
import assert from "node:assert/strict";
import { test } from "node:test";

import { create, fromBinary, fromJson, toBinary, toJson } from "@bufbuild/protobuf";

import { file_buf_validate_validate } from "../../ts/src/gen/buf/validate/validate_pb.js";
import { CatalogService, UpdateShowRequestSchema } from "../../ts/src/gen/seatghor/catalog/v1/catalog_pb.js";
import { CreateOrderRequestSchema } from "../../ts/src/gen/seatghor/booking/v1/order_pb.js";

test("validate.proto is the empty stand-in", () => {
  assert.equal(file_buf_validate_validate.name, "buf/validate/validate");
  assert.equal(file_buf_validate_validate.messages.length, 0);
  assert.equal(file_buf_validate_validate.extensions.length, 0);
});

test("a file with rules still boots, and its messages go both ways", () => {
  assert.ok(CatalogService.method.updateShow, "the service's methods are there");
  const req = create(UpdateShowRequestSchema, { showId: 42n, title: "ঢাকা থেকে চট্টগ্রাম", reason: "renamed" });
  assert.deepEqual(fromBinary(UpdateShowRequestSchema, toBinary(UpdateShowRequestSchema, req)), req);
  assert.deepEqual(toJson(UpdateShowRequestSchema, req), { showId: "42", title: "ঢাকা থেকে চট্টগ্রাম", reason: "renamed" });
  const order = fromJson(CreateOrderRequestSchema, { holdId: "hld_1_x", contact: { phone: "+8801711234567", language: "bn" } });
  assert.equal(order.contact?.language, "bn");
});

test("a rule's options are unknown fields, not an error", () => {
  // UpdateShowRequest.show_id has a rule (gt 0) in the proto.
  const field = UpdateShowRequestSchema.fields.find((f) => f.name === "show_id");
  assert.ok(field, "show_id is a field");
  assert.ok(field.proto.options?.$unknown?.length, "the rule is kept, unread");
});
