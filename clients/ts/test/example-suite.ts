// examples/reseller.ts against the real `seatghor dev` that api.test.ts
// starts: a partner made by an admin, with a booking key and a key of scope
// webhooks, and two seats of a show allocated to it. The program subscribes
// a receiver, sells from its allocation, gets booking.confirmed with a
// verified Standard Webhooks signature and deletes its endpoint; run again,
// its allocation sold out, it sells from general sale around the seats
// already taken. Its receiver refuses a delivery that does not verify.
import { before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Webhook } from "standardwebhooks";

import { Receiver, sell } from "../examples/reseller.js";
import type { ResellerOptions } from "../examples/reseller.js";
import { SeatMapView, buy, phoneClient } from "../examples/mobile.js";
import { AllocationStatus, ApiKeyScope, OrderStatus, ShowKind, createSeatghorClient } from "../src/index.js";

interface Server {
  baseUrl: string;
  tokens: { admin: string; alice: string };
}

export function exampleSuite(server: () => Server): void {
  describe("examples/reseller.ts", () => {
    let options: ResellerOptions;
    let showId = 0n;
    let partnerId = 0n;
    const lines: string[] = [];

    before(async () => {
      const admin = createSeatghorClient({ baseUrl: server().baseUrl, token: server().tokens.admin });
      const { show } = await admin.catalog.createShow({
        kind: ShowKind.BUS_TRIP,
        title: "TS reseller example",
        origin: "Dhaka",
        destination: "Khulna",
        startsAt: timestampFromDate(new Date(Date.now() + 30 * 24 * 3600 * 1000)),
        currency: "BDT",
        sections: [{ name: "Main", rows: ["A", "B"], seatsPerRow: 4, priceMinor: 60000n }],
      });
      showId = show!.showId;
      const { partner } = await admin.partners.createPartner({ name: "TS reseller example", commissionBps: 500 });
      partnerId = partner!.partnerId;
      // A new partner sells nothing until allowed (decision 0284).
      await admin.partners.updatePartnerAccess({ partnerId, allowShowIds: [showId] });
      const key = async (scope: ApiKeyScope) =>
        (await admin.partners.createApiKey({ partnerId, name: `example ${ApiKeyScope[scope]}`, scope })).secret;
      const [apiKey, webhooksKey] = [await key(ApiKeyScope.BOOKING), await key(ApiKeyScope.WEBHOOKS)];
      await admin.allocations.allocateSeats({
        showId,
        partnerId,
        seats: ["A1", "A2"],
        returnAt: timestampFromDate(new Date(Date.now() + 3600 * 1000)),
        generalSale: true,
      });
      options = {
        baseUrl: server().baseUrl,
        apiKey,
        webhooksKey,
        showId,
        seats: 2,
        sandboxToken: "tok_success",
        listenHost: "127.0.0.1",
        listenPort: 0,
        waitMs: 60_000,
        log: (line) => lines.push(line),
      };
    });

    test("sells its allocation, confirmed by a verified webhook, and deletes its endpoint", async () => {
      const sale = await sell(options);
      assert.equal(sale.showId, showId);
      assert.ok(sale.fromAllocation, lines.join("\n"));
      assert.deepEqual(sale.seats, ["A1", "A2"]);
      assert.equal(sale.confirmed.orderId, sale.orderId);
      assert.deepEqual(sale.confirmed.seats, ["A1", "A2"]);
      assert.equal(sale.confirmed.showId, showId);
      assert.equal(sale.confirmed.total?.amountMinor, 120000n);
      assert.equal(sale.confirmed.total?.currency, "BDT");
      assert.ok(lines.some((l) => l.startsWith(`confirmed by webhook: order ${sale.orderId}, seats A1 A2`)), lines.join("\n"));
      assert.ok(lines.includes(`deleted endpoint ${sale.endpointId}`), lines.join("\n"));

      const partner = createSeatghorClient({ baseUrl: options.baseUrl, token: options.apiKey });
      assert.equal((await partner.orders.getOrder({ orderId: sale.orderId })).order?.status, OrderStatus.CONFIRMED);
      const { endpoints } = await partner.webhooks.listEndpoints({});
      assert.deepEqual(endpoints, [], "the endpoint is deleted");
      const { allocations } = await partner.allocations.listAllocations({ showId });
      assert.equal(allocations.length, 1);
      assert.equal(allocations[0].partnerId, partnerId);
      assert.equal(allocations[0].status, AllocationStatus.ACTIVE);
      assert.equal(allocations[0].available, 0, "both allocated seats sold");
    });

    test("run again, it sells from general sale around the seats already taken", async () => {
      lines.length = 0;
      const sale = await sell(options);
      assert.ok(!sale.fromAllocation, lines.join("\n"));
      assert.equal(sale.seats.length, 2);
      assert.ok(!sale.seats.some((s) => s === "A1" || s === "A2"), `sold ${sale.seats.join(" ")} again`);
      assert.ok(lines.includes("taken meanwhile: A1 A2; choosing again"), lines.join("\n"));
      assert.deepEqual(sale.confirmed.seats, sale.seats);
      const partner = createSeatghorClient({ baseUrl: options.baseUrl, token: options.webhooksKey });
      assert.deepEqual((await partner.webhooks.listEndpoints({})).endpoints, []);
    });

    test("its receiver refuses a delivery that does not verify", async () => {
      const secret = `whsec_${randomBytes(32).toString("base64")}`;
      const receiver = new Receiver(secret);
      const srv = createServer(receiver.handle);
      await new Promise<void>((resolve) => srv.listen(0, "127.0.0.1", resolve));
      try {
        const url = `http://127.0.0.1:${(srv.address() as AddressInfo).port}/`;
        const body = JSON.stringify({
          type: "booking.confirmed",
          event_id: "evt_1",
          data: { show_id: "1", order_id: "ord_x", seats: ["A1"], total: { currency: "BDT", amount_minor: "100" } },
        });
        const post = (id: string, signer: Webhook, payload = body) => {
          const now = new Date();
          return fetch(url, {
            method: "POST",
            headers: {
              "content-type": "application/json",
              "webhook-id": id,
              "webhook-timestamp": String(Math.floor(now.getTime() / 1000)),
              "webhook-signature": signer.sign(id, now, payload),
            },
            body,
          });
        };
        const forger = new Webhook(`whsec_${randomBytes(32).toString("base64")}`);
        assert.equal((await post("msg_1", forger)).status, 401, "another secret's signature");
        assert.equal((await post("msg_2", new Webhook(secret), body.replace("A1", "A2"))).status, 401, "a changed body");
        assert.equal((await post("msg_3", new Webhook(secret))).status, 204);
        const confirmed = await receiver.confirmation("ord_x", 1000);
        assert.deepEqual(confirmed.seats, ["A1"]);
      } finally {
        await new Promise((resolve) => srv.close(resolve));
      }
    });
  });

  // examples/mobile.ts (docs/mobile.md): a phone's client in the binary
  // encoding keeps a seat map current with availability-only refreshes and
  // buys two seats.
  describe("examples/mobile.ts", () => {
    test("binary calls: the map's layout once, then availability only; a purchase", async () => {
      const admin = createSeatghorClient({ baseUrl: server().baseUrl, token: server().tokens.admin });
      const { show } = await admin.catalog.createShow({
        kind: ShowKind.BUS_TRIP,
        title: "TS mobile example",
        origin: "Dhaka",
        destination: "Sylhet",
        startsAt: timestampFromDate(new Date(Date.now() + 30 * 24 * 3600 * 1000)),
        currency: "BDT",
        sections: [{ name: "Main", rows: ["A", "B"], seatsPerRow: 4, priceMinor: 85000n }],
      });
      const showId = show!.showId;
      // What went over the wire: every call in the binary encoding.
      const sent: string[] = [];
      const recording: typeof fetch = (input, init) => {
        const url = input instanceof Request ? input.url : String(input);
        const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
        sent.push(`${init?.method ?? "GET"} ${url.includes("encoding=proto") || headers.get("content-type") === "application/proto" ? "proto" : "other"}`);
        return fetch(input, init);
      };
      const sg = phoneClient({ baseUrl: server().baseUrl, token: () => server().tokens.alice, fetch: recording });
      const view = new SeatMapView(sg, showId);
      assert.equal(await view.refresh(), true, "the first answer carries the layout");
      assert.deepEqual(view.free(), ["A1", "A2", "A3", "A4", "B1", "B2", "B3", "B4"]);
      assert.equal(await view.refresh(), false, "then availability only");

      const bought = await buy(sg, showId, ["A1", "A2"], "tok_success");
      assert.equal(bought.redirectUrl, "");
      let status = OrderStatus.PENDING_PAYMENT;
      for (let i = 0; i < 100 && status !== OrderStatus.CONFIRMED; i++) {
        status = (await sg.orders.getOrder({ orderId: bought.orderId })).order!.status;
        if (status !== OrderStatus.CONFIRMED) await new Promise((r) => setTimeout(r, 100));
      }
      assert.equal(status, OrderStatus.CONFIRMED);
      for (let i = 0; i < 100; i++) {
        await view.refresh();
        if (!view.free().includes("A1")) break;
        await new Promise((r) => setTimeout(r, 100)); // the map follows the purchase within a moment
      }
      assert.deepEqual(view.free(), ["A3", "A4", "B1", "B2", "B3", "B4"]);
      assert.ok(sent.length >= 6, sent.join(", "));
      assert.deepEqual([...new Set(sent.map((s) => s.split(" ")[1]))], ["proto"], sent.join(", "));
      assert.ok(sent.includes("POST proto") && sent.includes("GET proto"), sent.join(", "));
    });
  });
}
