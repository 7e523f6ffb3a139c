#!/usr/bin/env python3
"""Generates sample-graph.json, the graph Signpost embeds and serves by default.

A small but realistic service code base ("acme shop": orders, payments,
inventory, customers, shipping) in the documented graph format
(docs/graph-format.md). Ids are the SHA-1 of each symbol's qualified name, so
regenerating gives the same ids. Run: python3 host/data/gen_sample_graph.py
"""
import hashlib
import json
import os

nodes, edges, by_fqn = [], [], {}
line_of = {}


def node(kind, fqn, name, file, roles=(), doc=""):
    if fqn in by_fqn:
        return by_fqn[fqn]
    line = line_of.get(file, 0) + (1 if kind in ("module", "class", "interface") else 4)
    line_of[file] = line
    nid = hashlib.sha1(fqn.encode()).hexdigest()
    nodes.append({"id": nid, "kind": kind, "name": name, "fqn": fqn, "file": file,
                  "line": line, "roles": list(roles), "doc": doc})
    by_fqn[fqn] = nid
    return nid


def edge(src, dst, typ):
    edges.append({"src": src, "dst": dst, "type": typ})


PKG = "com.acme.shop"
root = node("module", PKG, "shop", "src/main/java/com/acme/shop", doc="Acme shop backend.")

# Shared base types.
common = node("module", f"{PKG}.common", "common", "src/main/java/com/acme/shop/common")
edge(root, common, "DECLARES")
CF = "src/main/java/com/acme/shop/common"
base_entity = node("class", f"{PKG}.common.BaseEntity", "BaseEntity", f"{CF}/BaseEntity.java", ["entity"],
                   "Base class of persistent entities: id, version, audit timestamps.")
base_validate = node("method", f"{PKG}.common.BaseEntity.validate", "validate", f"{CF}/BaseEntity.java", [],
                     "Checks invariants before the entity is saved.")
edge(common, base_entity, "DECLARES")
edge(base_entity, base_validate, "DECLARES")
for f in ("id", "version", "createdAt"):
    fid = node("field", f"{PKG}.common.BaseEntity.{f}", f, f"{CF}/BaseEntity.java")
    edge(base_entity, fid, "DECLARES")
base_ctrl = node("class", f"{PKG}.common.BaseController", "BaseController", f"{CF}/BaseController.java",
                 ["controller"], "Shared error handling and paging for REST controllers.")
base_handle = node("method", f"{PKG}.common.BaseController.handleError", "handleError",
                   f"{CF}/BaseController.java", [], "Maps exceptions to problem+json responses.")
edge(common, base_ctrl, "DECLARES")
edge(base_ctrl, base_handle, "DECLARES")
repo_iface = node("interface", f"{PKG}.common.Repository", "Repository", f"{CF}/Repository.java",
                  ["repository"], "Generic persistence port: findById, save, delete.")
edge(common, repo_iface, "DECLARES")
repo_methods = {}
for m in ("findById", "save", "delete"):
    repo_methods[m] = node("method", f"{PKG}.common.Repository.{m}", m, f"{CF}/Repository.java")
    edge(repo_iface, repo_methods[m], "DECLARES")
event_pub = node("interface", f"{PKG}.common.EventPublisher", "EventPublisher",
                 f"{CF}/EventPublisher.java", ["producer"], "Port for publishing domain events.")
event_pub_m = node("method", f"{PKG}.common.EventPublisher.publish", "publish", f"{CF}/EventPublisher.java")
edge(common, event_pub, "DECLARES")
edge(event_pub, event_pub_m, "DECLARES")

DOMAINS = {
    "orders": ("Order", ["customerId", "status", "total", "lines"],
               [("GET", "/orders/{id}", "getOrder"), ("POST", "/orders", "placeOrder"),
                ("POST", "/orders/{id}/cancel", "cancelOrder"), ("GET", "/orders", "listOrders")]),
    "payments": ("Payment", ["orderId", "amount", "currency", "status"],
                 [("POST", "/payments", "createPayment"), ("GET", "/payments/{id}", "getPayment"),
                  ("POST", "/payments/{id}/refund", "refundPayment")]),
    "inventory": ("StockItem", ["sku", "quantity", "warehouse"],
                  [("GET", "/inventory/{sku}", "getStock"), ("POST", "/inventory/reservations", "reserveStock"),
                   ("DELETE", "/inventory/reservations/{id}", "releaseStock")]),
    "customers": ("Customer", ["email", "name", "tier"],
                  [("GET", "/customers/{id}", "getCustomer"), ("POST", "/customers", "registerCustomer"),
                   ("PUT", "/customers/{id}", "updateCustomer")]),
    "shipping": ("Shipment", ["orderId", "carrier", "trackingNumber", "status"],
                 [("POST", "/shipments", "createShipment"), ("GET", "/shipments/{id}", "trackShipment")]),
}

routes, handlers, services, svc_methods, repos = {}, {}, {}, {}, {}
for dom, (ent, fields, endpoints) in DOMAINS.items():
    mod = node("module", f"{PKG}.{dom}", dom, f"src/main/java/com/acme/shop/{dom}", doc=f"The {dom} bounded context.")
    edge(root, mod, "DECLARES")
    d = f"src/main/java/com/acme/shop/{dom}"
    P = f"{PKG}.{dom}"
    # Entity.
    e = node("class", f"{P}.{ent}", ent, f"{d}/{ent}.java", ["entity"], f"Persistent {ent.lower()} aggregate.")
    edge(mod, e, "DECLARES")
    edge(e, base_entity, "EXTENDS")
    for f in fields:
        fid = node("field", f"{P}.{ent}.{f}", f, f"{d}/{ent}.java")
        edge(e, fid, "DECLARES")
    if dom == "orders":
        st = node("enum", f"{P}.{ent}.Status", "Status", f"{d}/{ent}.java", [],
                  "Order lifecycle: NEW, PAID, SHIPPED, CANCELLED.")
        edge(e, st, "DECLARES")
    ev = node("method", f"{P}.{ent}.validate", "validate", f"{d}/{ent}.java", [], f"Validates the {ent.lower()} before saving.")
    edge(e, ev, "DECLARES")
    edge(ev, base_validate, "OVERRIDES")
    # DTO.
    dto = node("class", f"{P}.{ent}Dto", f"{ent}Dto", f"{d}/{ent}Dto.java", ["dto"], f"Wire representation of a {ent.lower()}.")
    edge(mod, dto, "DECLARES")
    dfrom = node("method", f"{P}.{ent}Dto.from", "from", f"{d}/{ent}Dto.java", [], f"Maps a {ent} to its DTO.")
    edge(dto, dfrom, "DECLARES")
    edge(dfrom, e, "REFERENCES")
    # Repository port + JPA adapter.
    ri = node("interface", f"{P}.{ent}Repository", f"{ent}Repository", f"{d}/{ent}Repository.java", ["repository"],
              f"Persistence port for {ent} aggregates.")
    edge(mod, ri, "DECLARES")
    edge(ri, repo_iface, "EXTENDS")
    rimpl = node("class", f"{P}.Jpa{ent}Repository", f"Jpa{ent}Repository", f"{d}/Jpa{ent}Repository.java",
                 ["repository"], f"JPA implementation of {ent}Repository.")
    edge(mod, rimpl, "DECLARES")
    edge(rimpl, ri, "IMPLEMENTS")
    rm = {}
    for m in ("findById", "save"):
        im = node("method", f"{P}.{ent}Repository.{m}", m, f"{d}/{ent}Repository.java")
        edge(ri, im, "DECLARES")
        edge(im, repo_methods[m], "OVERRIDES")
        jm = node("method", f"{P}.Jpa{ent}Repository.{m}", m, f"{d}/Jpa{ent}Repository.java", [], f"{m} via the JPA entity manager.")
        edge(rimpl, jm, "DECLARES")
        edge(jm, im, "OVERRIDES")
        edge(jm, e, "REFERENCES")
        rm[m] = im
    repos[dom] = rm
    # Service.
    svc = node("class", f"{P}.{ent}Service", f"{ent}Service", f"{d}/{ent}Service.java", ["service"],
               f"Application service for the {dom} use cases.")
    edge(mod, svc, "DECLARES")
    edge(svc, ri, "REFERENCES")
    services[dom] = svc
    # Controller + routes.
    ctrl = node("class", f"{P}.{ent}Controller", f"{ent}Controller", f"{d}/{ent}Controller.java", ["controller"],
                f"REST endpoints of the {dom} context.")
    edge(mod, ctrl, "DECLARES")
    edge(ctrl, base_ctrl, "EXTENDS")
    edge(ctrl, svc, "REFERENCES")
    for verb, path, op in endpoints:
        sm = node("method", f"{P}.{ent}Service.{op}", op, f"{d}/{ent}Service.java", [], f"Use case: {op}.")
        edge(svc, sm, "DECLARES")
        svc_methods[(dom, op)] = sm
        edge(sm, rm["findById"], "CALLS")
        if verb != "GET":
            edge(sm, rm["save"], "CALLS")
            edge(sm, ev, "CALLS")
        hm = node("method", f"{P}.{ent}Controller.{op}", op, f"{d}/{ent}Controller.java", ["handler"],
                  f"Handles {verb} {path}.")
        edge(ctrl, hm, "DECLARES")
        edge(hm, sm, "CALLS")
        edge(hm, dfrom, "CALLS")
        edge(hm, dto, "REFERENCES")
        r = node("route", f"{verb} {path}", f"{verb} {path}", f"{d}/{ent}Controller.java", ["http"],
                 f"{verb} {path}, served by {ent}Controller.{op}.")
        edge(hm, r, "EXPOSES")
        routes[(verb, path)] = r
        handlers[(verb, path)] = hm
    ctrl_err = node("method", f"{P}.{ent}Controller.handleError", "handleError", f"{d}/{ent}Controller.java", [],
                    f"{dom} specific error mapping.")
    edge(ctrl, ctrl_err, "DECLARES")
    edge(ctrl_err, base_handle, "OVERRIDES")

# Messaging: topics, producers, consumers.
MF = "src/main/java/com/acme/shop/messaging"
msg = node("module", f"{PKG}.messaging", "messaging", MF, doc="Kafka producers and consumers.")
edge(root, msg, "DECLARES")
topics = {}
for t, doc in (("order-events", "Order lifecycle events: placed, cancelled."),
               ("payment-events", "Payment captured / refunded events."),
               ("shipment-events", "Shipment created / delivered events."),
               ("stock-events", "Stock reserved / released events.")):
    topics[t] = node("topic", f"kafka:{t}", t, f"{MF}/Topics.java", ["kafka"], doc)
producers = {}
for prod, topic, dom in (("OrderEventProducer", "order-events", "orders"),
                         ("PaymentEventProducer", "payment-events", "payments"),
                         ("ShipmentEventProducer", "shipment-events", "shipping"),
                         ("StockEventProducer", "stock-events", "inventory")):
    p = node("class", f"{PKG}.messaging.{prod}", prod, f"{MF}/{prod}.java", ["producer"],
             f"Publishes to the {topic} topic.")
    edge(msg, p, "DECLARES")
    edge(p, event_pub, "IMPLEMENTS")
    pm = node("method", f"{PKG}.messaging.{prod}.publish", "publish", f"{MF}/{prod}.java", [], f"Sends an event to {topic}.")
    edge(p, pm, "DECLARES")
    edge(pm, event_pub_m, "OVERRIDES")
    edge(pm, topics[topic], "PUBLISHES")
    producers[dom] = pm
for cons, topic, target in (("PaymentEventsListener", "payment-events", ("orders", "placeOrder")),
                            ("OrderEventsListener", "order-events", ("inventory", "reserveStock")),
                            ("OrderShippingListener", "order-events", ("shipping", "createShipment")),
                            ("ShipmentEventsListener", "shipment-events", ("customers", "updateCustomer"))):
    c = node("class", f"{PKG}.messaging.{cons}", cons, f"{MF}/{cons}.java", ["consumer"], f"Consumes {topic}.")
    edge(msg, c, "DECLARES")
    cm = node("method", f"{PKG}.messaging.{cons}.onMessage", "onMessage", f"{MF}/{cons}.java", ["handler"],
              f"Handles one {topic} record.")
    edge(c, cm, "DECLARES")
    edge(cm, topics[topic], "SUBSCRIBES")
    edge(cm, svc_methods[target], "CALLS")
# Services publish their events.
for (dom, op), sm in svc_methods.items():
    if dom in producers and op not in ("getOrder", "listOrders", "getPayment", "getStock", "trackShipment"):
        edge(sm, producers[dom], "CALLS")

# HTTP clients: internal service-to-service and external providers.
HF = "src/main/java/com/acme/shop/clients"
clients = node("module", f"{PKG}.clients", "clients", HF, doc="Outbound HTTP clients.")
edge(root, clients, "DECLARES")
ext = {}
for verb, url, doc in (("POST", "https://api.stripe.com/v1/charges", "Stripe: create a charge."),
                       ("POST", "https://api.stripe.com/v1/refunds", "Stripe: refund a charge."),
                       ("POST", "https://api.dhl.com/shipments", "DHL: book a shipment."),
                       ("GET", "https://api.dhl.com/track/{number}", "DHL: tracking status.")):
    ext[url] = node("route", f"{verb} {url}", f"{verb} {url}", f"{HF}/external", ["http", "external"], doc)
CLIENTS = {
    "StripeClient": ("payments", [("charge", ext["https://api.stripe.com/v1/charges"], ("payments", "createPayment")),
                                  ("refund", ext["https://api.stripe.com/v1/refunds"], ("payments", "refundPayment"))]),
    "DhlClient": ("shipping", [("book", ext["https://api.dhl.com/shipments"], ("shipping", "createShipment")),
                               ("track", ext["https://api.dhl.com/track/{number}"], ("shipping", "trackShipment"))]),
    "InventoryClient": ("orders", [("reserve", routes[("POST", "/inventory/reservations")], ("orders", "placeOrder")),
                                   ("release", routes[("DELETE", "/inventory/reservations/{id}")], ("orders", "cancelOrder"))]),
    "PaymentsClient": ("orders", [("pay", routes[("POST", "/payments")], ("orders", "placeOrder")),
                                  ("refund", routes[("POST", "/payments/{id}/refund")], ("orders", "cancelOrder"))]),
    "CustomerClient": ("orders", [("fetch", routes[("GET", "/customers/{id}")], ("orders", "getOrder"))]),
}
for cname, (dom, methods) in CLIENTS.items():
    c = node("class", f"{PKG}.clients.{cname}", cname, f"{HF}/{cname}.java", ["http_client"],
             f"HTTP client used by the {dom} context.")
    edge(clients, c, "DECLARES")
    for m, target, caller in methods:
        cm = node("method", f"{PKG}.clients.{cname}.{m}", m, f"{HF}/{cname}.java", [], f"Calls the remote endpoint.")
        edge(c, cm, "DECLARES")
        edge(cm, target, "TARGETS")
        edge(svc_methods[caller], cm, "CALLS")
    edge(services[dom], c, "REFERENCES")

# Configuration.
cfg = node("class", f"{PKG}.ShopApplication", "ShopApplication", "src/main/java/com/acme/shop/ShopApplication.java",
           ["config"], "Spring Boot entry point.")
edge(root, cfg, "DECLARES")
main = node("method", f"{PKG}.ShopApplication.main", "main", "src/main/java/com/acme/shop/ShopApplication.java", [],
            "Starts the application.")
edge(cfg, main, "DECLARES")

# Dead code: a class nothing declares, calls or references.
node("class", f"{PKG}.pricing.LegacyPriceCalculator", "LegacyPriceCalculator",
     "src/main/java/com/acme/shop/pricing/LegacyPriceCalculator.java", [],
     "Pre-2019 price rules; unused since the pricing service moved out.")

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sample-graph.json")
with open(out, "w") as fh:
    json.dump({"format": "signpost-graph", "version": 1, "name": "acme-shop", "nodes": nodes, "edges": edges},
              fh, indent=1)
    fh.write("\n")
kinds = {}
for n in nodes:
    kinds[n["kind"]] = kinds.get(n["kind"], 0) + 1
types = sorted({e["type"] for e in edges})
print(f"{len(nodes)} nodes {kinds}, {len(edges)} edges, types {types}")
