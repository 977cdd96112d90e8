// ticketNumber is the server's ticket.Number (decision 0471): the same
// examples as server/ticket/number_test.go.
import { test } from "node:test";
import assert from "node:assert/strict";

import { ticketNumber } from "../src/browser.js";

test("an order's ticket number is its id's first ten random characters", () => {
  assert.equal(ticketNumber("ord_1000_mwty306ptd9gg5y7"), "MWTY306PTD");
  for (const id of ["", "hld_1000_mwty306ptd9gg5y7", "ord_1000_short", "ord_0_mwty306ptd9gg5y7", "ord_1000_mwty306ptd9gg5yu", "tkt_1000_mwty306ptd9gg5y7_001"]) {
    assert.equal(ticketNumber(id), "", id);
  }
});
