package main

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// serverColors gives each ramp server a fixed colour.
var serverColors = map[string]color.Color{
	"actd-dispatch":    color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
	"actd-exclusive":   color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
	"apache-prefork":   color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
	"baseline":         color.RGBA{R: 0x7f, G: 0x7f, B: 0x7f, A: 0xff},
	"baseline-netconn": color.RGBA{R: 0xbc, G: 0xbd, B: 0x22, A: 0xff},
	"gunicorn":         color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff},
	"socket-activate":  color.RGBA{R: 0x8c, G: 0x56, B: 0x4b, A: 0xff},
}

// writePlot renders the ramps as a PNG at path: pool size above,
// accept-queue depth below, with the burst marked. It
// returns an error if a plot cannot be built or the file written.
func writePlot(path string, ramps []rampResult) error {
	if len(ramps) == 0 {
		return nil
	}
	timing := ramps[0].timing
	pool, err := newRampPlot("Pool size during the ramp", "processes", timing)
	if err != nil {
		return err
	}
	queue, err := newRampPlot("Accept queue", "connections waiting", timing)
	if err != nil {
		return err
	}
	for _, r := range ramps {
		if err := addRamp(pool, queue, r); err != nil {
			return err
		}
	}
	pool.Y.Max = float64(rampPool.max) * 1.1 // room above the cap
	return savePlots(path, pool, queue)
}

// newRampPlot makes an empty plot with the burst window marked.
func newRampPlot(title, yLabel string, timing rampTiming) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = fmt.Sprintf("seconds (burst of %d clients, %v handler, from %.0f s to %.0f s)",
		timing.conns, timing.delay, timing.idle.Seconds(), (timing.idle + timing.burst).Seconds())
	p.Y.Label.Text = yLabel
	p.Y.Min = 0
	p.Legend.Top = true
	p.X.Tick.Marker = plot.TickerFunc(everyFiveSeconds)
	p.Add(plotter.NewGrid())
	for _, at := range []float64{timing.idle.Seconds(), (timing.idle + timing.burst).Seconds()} {
		mark, err := plotter.NewLine(plotter.XYs{{X: at, Y: 0}, {X: at, Y: 1}})
		if err != nil {
			return nil, err
		}
		mark.Color = color.Gray{Y: 0x99}
		mark.Dashes = []vg.Length{vg.Points(2), vg.Points(2)}
		p.Add(&verticalMark{Line: mark})
	}
	return p, nil
}

// addRamp adds one server's pool-size and queue lines.
func addRamp(pool, queue *plot.Plot, r rampResult) error {
	size, waiting := make(plotter.XYs, len(r.samples)), make(plotter.XYs, len(r.samples))
	for i, s := range r.samples {
		x := s.at.Seconds()
		size[i], waiting[i] = plotter.XY{X: x, Y: float64(s.pool)}, plotter.XY{X: x, Y: float64(s.queue)}
	}
	for _, l := range []struct {
		p   *plot.Plot
		xys plotter.XYs
	}{{pool, size}, {queue, waiting}} {
		line, err := plotter.NewLine(l.xys)
		if err != nil {
			return fmt.Errorf("plot %s: %w", r.server, err)
		}
		line.LineStyle = lineStyle(r.server)
		l.p.Add(line)
		l.p.Legend.Add(r.server, line)
	}
	return nil
}

// lineStyle draws each server differently enough that lines lying on top of
// each other (two servers with the same ramp) stay visible: actd-exclusive
// wide, Apache dashed, the rest plain.
func lineStyle(server string) draw.LineStyle {
	style := draw.LineStyle{Color: serverColors[server], Width: vg.Points(1.5)}
	switch server {
	case "actd-exclusive":
		style.Width = vg.Points(4)
	case "apache-prefork":
		style.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
	}
	return style
}

// savePlots stacks the plots vertically into one PNG at path.
func savePlots(path string, plots ...*plot.Plot) error {
	img := vgimg.New(vg.Points(900), vg.Points(300*float64(len(plots))))
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: len(plots), Cols: 1, PadX: vg.Points(10), PadY: vg.Points(10), PadTop: vg.Points(5), PadBottom: vg.Points(5), PadLeft: vg.Points(5), PadRight: vg.Points(10)}
	grid := make([][]*plot.Plot, len(plots))
	for i, p := range plots {
		grid[i] = []*plot.Plot{p}
	}
	canvases := plot.Align(grid, tiles, dc)
	for i, p := range plots {
		p.Draw(canvases[i][0])
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("plot %s: %w", path, err)
	}
	return f.Close()
}

// verticalMark draws a vertical line at its X across the whole plot height,
// whatever the Y range turns out to be.
type verticalMark struct {
	*plotter.Line
}

// Plot draws the mark from the bottom to the top of the data area.
func (m *verticalMark) Plot(c draw.Canvas, p *plot.Plot) {
	x := p.X.Norm(m.XYs[0].X)
	xc := c.Min.X + vg.Length(x)*(c.Max.X-c.Min.X)
	c.StrokeLine2(m.LineStyle, xc, c.Min.Y, xc, c.Max.Y)
}

// everyFiveSeconds labels the time axis every 5 s, with a minor tick every
// second.
func everyFiveSeconds(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	for s := math.Ceil(lo); s <= hi; s++ {
		t := plot.Tick{Value: s}
		if int(s)%5 == 0 {
			t.Label = strconv.Itoa(int(s))
		}
		ticks = append(ticks, t)
	}
	return ticks
}
