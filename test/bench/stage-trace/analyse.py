# Reads the JSON lines of stage-trace.patch (EOS_STAGE_TRACE=<file>) and prints, per stage,
# the percentiles of a record's time; the first <skip> seconds (default 5, the warm-up) are left out.
# usage: python3 test/bench/stage-trace/analyse.py <file> [skip-seconds]
import json,sys,statistics as st
f=sys.argv[1]; skip=float(sys.argv[2]) if len(sys.argv)>2 else 5
tx=[];eld=[]
for l in open(f):
    o=json.loads(l)
    (tx if o['k']=='txn' else eld).append(o)
if not tx: sys.exit('no txns')
t0=min(r[0] for t in tx for r in t['recs'])+skip*1000
tx=[t for t in tx if min(r[0] for r in t['recs'])>=t0]
def pct(a,p):
    a=sorted(a); return a[min(len(a)-1,int(len(a)*p/100))] if a else None
def show(name,a): print(f"{name:28s} p50 {pct(a,50):7.1f} p90 {pct(a,90):7.1f} p99 {pct(a,99):7.1f} max {max(a):7.1f} mean {st.mean(a):6.1f}")
recs=[(r,t) for t in tx for r in t['recs']]
show('produce->delivered', [r[1]-r[0] for r,t in recs])
show('delivered->done (xform)', [r[2]-r[1] for r,t in recs if r[2]])
show('done->taken', [t['takenAt']-r[2] for r,t in recs if r[2]])
show('taken->commit start', [t['start']-t['takenAt'] for r,t in recs])
show('commit (per record)', [t['end']-t['start'] for r,t in recs])
show('produce->committed', [t['end']-r[0] for r,t in recs])
print('txns',len(tx),'records/txn mean',st.mean(t['n'] for t in tx))
show('commit duration (per txn)', [t['end']-t['start'] for t in tx])
for i,name in enumerate(['begin','addPartitions','send+addOffsets','txnOffsetCommit','endTxn']):
    a=[ (t['steps'][i]-(t['steps'][i-1] if i else 0)) for t in tx if t.get('steps') and len(t['steps'])>i]
    if a: show('  step '+name, a)
# Older traces carry lingerFrom (the commit linger's start); the commit cadence has none to show.
gaps=[b['lingerFrom']-a['end'] for a,b in zip(tx,tx[1:]) if 'lingerFrom' in b]
if gaps: show('gap commit end->next linger', gaps)
e=[x for x in eld if x['at']>=t0]
if e:
    show('eld p99 per s', [x['p99'] for x in e]); show('eld max per s',[x['max'] for x in e])
    g=[d for x in e for d in x['gc']]; 
    if g: show('gc pauses', g); print('gc count',len(g),'over',len(e),'s; >10ms:',sum(1 for d in g if d>10))
