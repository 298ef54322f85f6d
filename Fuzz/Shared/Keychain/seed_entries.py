"""The structured-mode entries both open targets' seed scripts write (Fuzz/OpenReplay/seeds/make-seeds.py,
Fuzz/OpenV2/seeds/make-seeds.py): a put of an item from the pool of 8 with catalogue attributes, in the layout
of ItemPlaintext.swift and the targets' StructuredMode.swift."""
import struct

# Indexes into Attribute.all (Sources/KeychainFile/Model/Attribute+Catalogue.swift).
ATTR = {name: i for i, name in enumerate(
    "accessGroup accessible synchronizable label creationDate modificationDate account service generic "
    "description comment creator type isInvisible isNegative server securityDomain protocol "
    "authenticationType port path certificateType certificateEncoding subject issuer serialNumber "
    "subjectKeyID publicKeyHash keyClass applicationLabel applicationTag keyType keySizeInBits "
    "effectiveKeySize isPermanent canEncrypt canDecrypt canDerive canSign canVerify canWrap canUnwrap".split())}

def i64(n): return struct.pack(">q", n)

def put(item, cls, attrs, secret, add_dates=True):
    """A structured put (op 0): item, class and (name, value) attributes; op bit 2 adds valid dates, bit 5 a
    u16 secret length when the secret is longer than 255 bytes."""
    op = 0x04 if add_dates else 0x00
    if len(secret) > 255: op |= 0x20
    out = bytes([op, item, cls, len(attrs)])
    for name, value in attrs:
        value = value.encode() if isinstance(value, str) else value
        out += bytes([ATTR[name], len(value)]) + value
    out += (struct.pack(">H", len(secret)) if op & 0x20 else bytes([len(secret)])) + secret
    return out
