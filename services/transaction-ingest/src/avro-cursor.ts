/**
 * Reads Avro binary values in place (the table loader's transcoder): numbers
 * are decoded, strings are left as byte ranges of `buf`.
 */
export class AvroCursor {
  buf: Buffer = Buffer.alloc(0)
  pos = 0
  end = 0

  reset(buf: Buffer, offset: number): void {
    this.buf = buf
    this.pos = offset
    this.end = buf.length
  }

  /** An unsigned varint (the raw zig-zag form of an int or long). */
  varint(): number {
    let result = 0
    let factor = 1
    for (;;) {
      if (this.pos >= this.end) throw new RangeError('Avro value ends inside a number')
      const b = this.buf[this.pos++] as number
      result += (b & 0x7f) * factor
      if (b < 0x80) return result
      factor *= 0x80
      if (factor > 2 ** 63) throw new RangeError('Avro number longer than 10 bytes')
    }
  }

  /** An int or long (zig-zag varint); exact up to 2^53. */
  long(): number {
    const z = this.varint()
    return z % 2 === 0 ? z / 2 : -(z + 1) / 2
  }

  double(): number {
    this.#need(8)
    const v = this.buf.readDoubleLE(this.pos)
    this.pos += 8
    return v
  }

  float(): number {
    this.#need(4)
    const v = this.buf.readFloatLE(this.pos)
    this.pos += 4
    return v
  }

  byte(): number {
    this.#need(1)
    return this.buf[this.pos++] as number
  }

  /** Skips a string's bytes and returns their length; they start at `pos - length`. */
  stringLength(): number {
    const len = this.long()
    if (len < 0) throw new RangeError(`Avro string of negative length ${len}`)
    this.#need(len)
    this.pos += len
    return len
  }

  #need(bytes: number): void {
    if (this.pos + bytes > this.end) throw new RangeError('Avro value ends early')
  }
}
