/**
 * The limiter subject of a request without a valid key (CONTRACT section 6): its client address,
 * with IPv6 clients counted by their /64 network (one customer's allocation, so walking the
 * addresses of one network gains nothing) and IPv4-mapped IPv6 (`::ffff:127.0.0.1`, as a
 * dual-stack socket reports an IPv4 peer) counted as the IPv4 address it is. Parsing and
 * normalising are ipaddr.js's; the result is the same string for every spelling of an address.
 */
import ipaddr from 'ipaddr.js';

/** Every address-bucket subject starts with this; key subjects never do. */
export const ADDRESS_SUBJECT_PREFIX = 'addr:';

/** Bits of an IPv6 address that name one client: its /64 network. */
export const IPV6_CLIENT_PREFIX = 64;

/**
 * The address one bucket counts: an IPv4 address in dotted decimal, an IPv6 client's /64 network
 * as `<network>/64` (RFC 5952 form), or, for a string that is no IP address at all (a host that
 * hands over something else), that string as it is.
 */
export function clientNetwork(address: string): string {
  if (!ipaddr.isValid(address)) return address;
  const parsed = ipaddr.process(address); // IPv4-mapped IPv6 becomes IPv4
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const bytes = parsed.toByteArray();
  for (let i = IPV6_CLIENT_PREFIX / 8; i < 16; i++) bytes[i] = 0;
  return `${(ipaddr.fromByteArray(bytes) as ipaddr.IPv6).toRFC5952String()}/${IPV6_CLIENT_PREFIX}`;
}

/** The limiter subject of requests without a valid key from `address`. */
export function addressSubject(address: string): string {
  return ADDRESS_SUBJECT_PREFIX + clientNetwork(address);
}

/** Whether a limiter subject is an address bucket (not a key's state). */
export function isAddressSubject(subject: string): boolean {
  return subject.startsWith(ADDRESS_SUBJECT_PREFIX);
}

/**
 * Why an address may not be reached by a webhook (CONTRACT section 14): the name of its ipaddr.js
 * range (`loopback`, `private`, `linkLocal`, `uniqueLocal`, `carrierGradeNat`, `multicast`,
 * `unspecified`, and every other special-purpose range), or undefined for a public unicast address.
 * IPv4-mapped IPv6 counts as the IPv4 address it is. Not an IP address at all: `invalid`.
 */
export function forbiddenAddressRange(address: string): string | undefined {
  const bare = address.replace(/^\[|\]$/g, '');
  if (!ipaddr.isValid(bare)) return 'invalid';
  const range = ipaddr.process(bare).range();
  return range === 'unicast' ? undefined : range;
}
