# Reads back a ParaView series file and XDMF files and checks that every
# file they name exists and holds what they say (tests/lit/io/series.test).
import json, os, sys, xml.etree.ElementTree as ET
import numpy as np, h5py
os.chdir(sys.argv[1])
s = json.load(open('u.vtk.series'))
assert s['file-series-version'] == '1.0'
for f in s['files']:
    head = open(f['name'], 'rb').read(300).split(b'\n')
    assert head[0].startswith(b'# vtk DataFile'), f['name']
    dims = [l for l in head if l.startswith(b'DIMENSIONS')][0]
    print('vtk', f['name'], 'time', f['time'], dims.decode())
def xdmf(path):
    root = ET.parse(path).getroot()
    for grid in root.iter('Grid'):
        if grid.get('GridType') != 'Uniform':
            print('collection', grid.get('CollectionType'))
            continue
        t = grid.find('Time')
        topo = grid.find('Topology')
        for a in grid.findall('Attribute'):
            item = a.find('DataItem')
            fname, ds = item.text.split(':')
            data = h5py.File(fname)[ds.lstrip('/')]
            shape = tuple(int(x) for x in item.get('Dimensions').split())
            assert data.shape == shape == tuple(int(x) for x in topo.get('Dimensions').split()), (data.shape, shape)
            print('xdmf', path, 'time' if t is not None else '', t.get('Value') if t is not None else '', fname, ds,
                  'shape', data.shape, 'step', int(data.attrs['step'][0]), 'max %.6g' % np.max(data))
xdmf('h.xdmf')
xdmf('w.xdmf')
