# ParaView opens the series and the XDMF files (tests/lit/io/series.test).
import os, sys
from paraview.simple import OpenDataFile, XDMFReader
os.chdir(sys.argv[1])
r = OpenDataFile('u.vtk.series')
r.UpdatePipeline()
print('paraview series times', list(r.TimestepValues), 'arrays', r.PointData.keys())
x = XDMFReader(FileNames=['h.xdmf'])
x.UpdatePipeline()
print('paraview xdmf times', list(x.TimestepValues), 'arrays', x.PointData.keys())
w = XDMFReader(FileNames=['w.xdmf'])
w.UpdatePipeline()
print('paraview volume', w.GetDataInformation().GetNumberOfPoints(), 'points, w in', w.PointData['w'].GetRange())
