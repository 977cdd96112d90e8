// The QR code of a ticket as SVG markup (qrcode-generator: small, no
// dependencies). The gate scans Ticket.code exactly as it is.
import qrcode from "qrcode-generator";

export function qrSvg(text: string): string {
  const qr = qrcode(0, "M");
  qr.addData(text, "Byte");
  qr.make();
  return qr.createSvgTag({ cellSize: 4, margin: 2, scalable: true });
}
