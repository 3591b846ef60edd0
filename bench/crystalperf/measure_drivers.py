import sys, os, zlib, hashlib, json, socket, sqlite3, time, threading, bz2, lzma, re
mode = sys.argv[1]
if mode == 'cpu':
    data = (b'abcdefghij' * 100000)
    for i in range(10):
        zlib.compress(data, 9); hashlib.sha256(data).digest(); bz2.compress(data[:200000]); lzma.compress(data[:100000])
        json.dumps([{'a': i, 'b': str(i)} for i in range(20000)]); re.findall(rb'[a-e]+', data[:300000])
elif mode == 'disk':
    with open('/var/tmp/lpmeas.dat', 'wb') as f:
        for i in range(300):
            f.write(b'x' * 65536); f.flush(); os.fsync(f.fileno())
    db = sqlite3.connect('/var/tmp/lpmeas.db')
    db.execute('create table if not exists t(a, b)')
    for i in range(200):
        db.execute('insert into t values(?, ?)', (i, 'x' * 1000)); db.commit()
    db.close(); os.unlink('/var/tmp/lpmeas.db'); os.unlink('/var/tmp/lpmeas.dat')
elif mode == 'net':
    srv = socket.socket(); srv.bind(('127.0.0.1', 0)); srv.listen(1)
    port = srv.getsockname()[1]
    def sink():
        c, _ = srv.accept()
        while True:
            b = c.recv(4096)
            if not b: break
            time.sleep(0.002)
        c.close()
    th = threading.Thread(target=sink); th.start()
    s = socket.create_connection(('127.0.0.1', port))
    for i in range(300):
        s.sendall(b'y' * 16384)
    s.close(); th.join()
