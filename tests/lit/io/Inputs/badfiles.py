# Good and bad input files for tests/lit/io/errors.test.
import struct, zlib, numpy as np
N, M = 8, 6
np.save('u.npy', np.ones((N, M)))
np.arange(N * M, dtype=np.int32).tofile('k.raw')
def png(name, w, h, gray):
    rows = b''.join(b'\x00' + bytes([gray(r, c) for c in range(w)]) for r in range(h))
    chunk = lambda t, d: struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d) & 0xffffffff)
    open(name, 'wb').write(b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', w, h, 8, 0, 0, 0, 0)) +
                           chunk(b'IDAT', zlib.compress(rows)) + chunk(b'IEND', b''))
png('m.png', M, N, lambda r, c: 0 if r < 2 else 255)
png('m_small.png', M + 1, N, lambda r, c: 0)
w = np.zeros((N, M)); w[1, 2] = np.nan
np.save('w.npy', w)
np.save('shape.npy', np.ones((N, M + 1)))
np.save('shape3.npy', np.ones((2, N, M)))
b = open('u.npy', 'rb').read(); open('trunc.npy', 'wb').write(b[:len(b) - 40])
np.save('complex.npy', np.ones((N, M), dtype=np.complex64))
np.save('fortran.npy', np.asfortranarray(np.ones((N, M))))
nan = np.ones((N, M)); nan[3, 4] = np.nan; nan[5, 1] = np.inf
np.save('nan.npy', nan)
np.arange(N * M - 1, dtype=np.int32).tofile('k_short.raw')
np.save('frac.npy', np.full((N, M), 0.5))
open('notnpy.npy', 'wb').write(b'hello, this is not a numpy file at all')
