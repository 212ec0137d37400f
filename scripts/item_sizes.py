"""Sizes of the items in a local table, by DynamoDB's item-size rules, grouped by kind.

The inputs of docs/scaling.md: run the README's campaign against `make run`, then
`.venv/bin/python scripts/item_sizes.py` (MOTO_ENDPOINT and TABLE_NAME as for the stack). Sizes
are attribute names plus values: strings in UTF-8 bytes, numbers about one byte per two digits
plus one, maps and lists 3 bytes plus 1 per element; DynamoDB's 100-byte per-item storage
overhead is not included.
"""

import collections
import math
import os
import re

import boto3


def number_size(text):
    digits = text.lstrip("-").replace(".", "").lstrip("0") or "0"
    return math.ceil(len(digits) / 2) + 1


def value_size(value):
    (kind, inner), = value.items()
    if kind == "S":
        return len(inner.encode())
    if kind == "N":
        return number_size(inner)
    if kind in ("BOOL", "NULL"):
        return 1
    if kind == "B":
        return len(inner)
    if kind == "M":
        return 3 + sum(len(k.encode()) + value_size(v) + 1 for k, v in inner.items())
    if kind == "L":
        return 3 + sum(value_size(v) + 1 for v in inner)
    raise ValueError(f"unsized attribute type {kind}")


def item_size(item):
    return sum(len(name.encode()) + value_size(value) for name, value in item.items())


def kind_of(item):
    pk, sk = item["pk"]["S"], item["sk"]["S"]
    if "#TASK#" in pk and sk.startswith("C#"):
        return "task contact state"
    return re.sub(r"#[^#]*$", "#", sk)


def main():
    client = boto3.client(
        "dynamodb",
        endpoint_url=os.environ.get("MOTO_ENDPOINT", "http://127.0.0.1:5000"),
        region_name="us-east-1",
        aws_access_key_id="test",
        aws_secret_access_key="test",
    )
    sizes = collections.defaultdict(list)
    pages = client.get_paginator("scan").paginate(TableName=os.environ.get("TABLE_NAME", "outbound"))
    for page in pages:
        for item in page["Items"]:
            sizes[kind_of(item)].append(item_size(item))
    print(f"{'kind':20} {'items':>6} {'min':>5} {'max':>5} {'mean':>5}")
    for kind, found in sorted(sizes.items()):
        print(f"{kind:20} {len(found):6} {min(found):5} {max(found):5} {sum(found) / len(found):5.0f}")


if __name__ == "__main__":
    main()
