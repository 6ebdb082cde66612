import { describe, expect, it } from 'vitest';
import { clientOf } from './connections.js';

describe('the client a connection is counted against', () => {
  it('is an IPv4 address as such, also when it comes IPv4-mapped', () => {
    expect(clientOf('127.0.0.2')).toBe('127.0.0.2');
    expect(clientOf('::ffff:127.0.0.2')).toBe('127.0.0.2');
  });

  it('is the /64 network of an IPv6 address, however the address is written', () => {
    expect(clientOf('2001:db8:1:2:3:4:5:6')).toBe('2001:db8:1:2::/64');
    expect(clientOf('2001:0DB8:0001:0002:ffff::1')).toBe('2001:db8:1:2::/64');
    expect(clientOf('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(clientOf('2001:db8:0:0:1::')).toBe('2001:db8:0:0::/64');
    expect(clientOf('::1')).toBe('0:0:0:0::/64');
    expect(clientOf('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
  });
});
