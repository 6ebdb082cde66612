import { describe, expect, it } from 'vitest';
import { addressSubject, clientNetwork, isAddressSubject } from './client-address.js';

describe('clientNetwork: what one address bucket counts', () => {
  it('keeps an IPv4 address as it is', () => {
    expect(clientNetwork('127.0.0.1')).toBe('127.0.0.1');
    expect(clientNetwork('203.0.113.7')).toBe('203.0.113.7');
  });

  it('counts an IPv4-mapped IPv6 address as the IPv4 address it is', () => {
    expect(clientNetwork('::ffff:127.0.0.1')).toBe('127.0.0.1');
    expect(clientNetwork('::FFFF:7f00:1')).toBe('127.0.0.1');
    expect(addressSubject('::ffff:203.0.113.7')).toBe(addressSubject('203.0.113.7'));
  });

  it('counts every address of one IPv6 /64 network as one client', () => {
    const network = clientNetwork('2001:db8:aaaa:bbbb::1');
    expect(network).toBe('2001:db8:aaaa:bbbb::/64');
    for (const a of ['2001:db8:aaaa:bbbb:ffff:ffff:ffff:ffff', '2001:db8:aaaa:bbbb:1234:5678:9abc:def0', '2001:0db8:AAAA:BBBB:0:0:0:2']) {
      expect(clientNetwork(a), a).toBe(network);
    }
  });

  it('counts neighbouring /64 networks apart', () => {
    expect(clientNetwork('2001:db8:aaaa:bbbc::1')).toBe('2001:db8:aaaa:bbbc::/64');
    expect(clientNetwork('2001:db8:aaaa:bbbc::1')).not.toBe(clientNetwork('2001:db8:aaaa:bbbb::1'));
    expect(clientNetwork('::1')).toBe('::/64');
  });

  it('drops an IPv6 zone index (a link-local peer is its /64 on any interface)', () => {
    expect(clientNetwork('fe80::1%eth0')).toBe('fe80::/64');
  });

  it('keeps a string that is no IP address as it is', () => {
    expect(clientNetwork('unknown')).toBe('unknown');
    expect(clientNetwork('')).toBe('');
  });
});

describe('addressSubject', () => {
  it('names an address bucket, never a key', () => {
    expect(addressSubject('127.0.0.1')).toBe('addr:127.0.0.1');
    expect(isAddressSubject(addressSubject('2001:db8::1'))).toBe(true);
    expect(isAddressSubject('key:1')).toBe(false);
  });
});
